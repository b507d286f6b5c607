"""A throwaway local PostgreSQL cluster for tests and development.

The cluster is created with ``initdb`` under a directory the caller owns, listens only
on 127.0.0.1 at a free port (its unix socket lives inside that directory too), trusts
every local connection and is tuned for speed over durability (``fsync=off``): never
keep data in it. When running as root the server binaries run as the ``postgres`` user.

Typical use::

    with LocalPostgres(tmp_path / "pg") as pg:
        url = pg.create_database("tocsin_test")   # postgresql+asyncpg://...
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self

import asyncpg

from devstack.ports import free_port, port_open, run_coro_sync

__all__ = ["LocalPostgres", "PostgresLocalError", "find_pg_bin"]

_PG_ROOT = Path("/usr/lib/postgresql")
_OS_USER = "postgres"
_DB_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_SOCKET_DIR_MAX = 90  # sun_path is 108 bytes and ".s.PGSQL.<port>" is appended
_INSTALL_HINT = "install it (Debian/Ubuntu: apt-get install postgresql)"


class PostgresLocalError(RuntimeError):
    """Raised when the local PostgreSQL cluster cannot be created or started."""


def _stderr(message: str) -> None:
    """Default progress sink: one line on stderr."""
    print(message, file=sys.stderr, flush=True)


def _version_key(path: Path) -> tuple[int, ...]:
    """Sort key for ``/usr/lib/postgresql/<version>/bin`` directories."""
    return tuple(int(p) for p in re.findall(r"\d+", path.parent.name)) or (0,)


def find_pg_bin() -> Path | None:
    """Return the bin directory of the newest PostgreSQL having initdb and pg_ctl.

    Honours ``$TOCSIN_PG_BIN``, then looks in ``/usr/lib/postgresql/*/bin``, then PATH.
    """
    env = os.environ.get("TOCSIN_PG_BIN")
    candidates = [Path(env)] if env else []
    if _PG_ROOT.is_dir():
        candidates += sorted(_PG_ROOT.glob("*/bin"), key=_version_key, reverse=True)
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for cand in candidates:
        if (cand / "initdb").is_file() and (cand / "pg_ctl").is_file():
            return cand
    return None


def _conf_quote(value: str) -> str:
    """Quote a string for postgresql.conf."""
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


class LocalPostgres:
    """A throwaway PostgreSQL cluster on 127.0.0.1, usable as a context manager."""

    host = "127.0.0.1"
    user = "postgres"

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        *,
        progress: Callable[[str], None] = _stderr,
    ) -> None:
        """Configure (but do not start) a cluster whose files live in ``data_dir``.

        As root the server runs as ``postgres``, which must traverse every parent of its files: then
        they live in a private directory directly under the system's temporary directory instead
        (removed when the process exits). Under pytest's ``/tmp/pytest-of-<user>`` they did not stay
        reachable: every pytest session that starts sets that directory back to mode 0700, and a
        second session on the machine locked the first one's server out of its own data (PANIC
        "could not open file .../global/pg_control: Permission denied", every later connection
        refused). The directory outlives :meth:`stop` (a restarted server finds its data) and is
        removed when the process exits."""
        self._as_root = os.geteuid() == 0
        self._owned_dir: Path | None = None
        if self._as_root:
            data_dir = self._owned_dir = Path(tempfile.mkdtemp(prefix="tocsin-pg-"))
            atexit.register(shutil.rmtree, self._owned_dir, ignore_errors=True)  # after stop() (registered later)
        self.data_dir = Path(data_dir).resolve()
        self.port = port if port is not None else free_port(self.host)
        self.progress = progress
        self.pgdata = self.data_dir / "pgdata"
        self.log_file = self.data_dir / "postgres.log"
        self.socket_dir = self.data_dir / "sock"
        self._tmp_socket_dir: Path | None = None
        self._bin: Path | None = None
        self._running = False

    # -- public API -------------------------------------------------------------------

    @property
    def url(self) -> str:
        """SQLAlchemy URL of the ``postgres`` database."""
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        """SQLAlchemy (asyncpg) URL of database ``name`` on this cluster."""
        return f"postgresql+asyncpg://{self.user}@{self.host}:{self.port}/{name}"

    def dsn(self, name: str = "postgres") -> str:
        """Plain libpq/asyncpg DSN of database ``name`` on this cluster."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{name}"

    def is_running(self) -> bool:
        """Return True while the server runs (per ``pg_ctl status``)."""
        if not self._running or self._bin is None:
            return False
        cmd = [str(self._bin / "pg_ctl"), "status", "-D", str(self.pgdata)]
        return self._run(cmd, check=False).returncode == 0

    def start(self, timeout: float = 60.0) -> str:
        """Create the cluster if needed, start it, wait until it accepts connections.

        Returns the SQLAlchemy URL of the ``postgres`` database.
        """
        if self._running:
            return self.url
        started = time.monotonic()
        self._bin = find_pg_bin()
        if self._bin is None:
            why = "PostgreSQL server binaries (initdb, pg_ctl) not found"
            raise PostgresLocalError(f"{why}: {_INSTALL_HINT}")
        if self._as_root and shutil.which("runuser") is None:
            raise PostgresLocalError("running as root needs `runuser` (util-linux) to drop to `postgres`")
        if port_open(self.host, self.port):
            raise PostgresLocalError(f"port {self.host}:{self.port} is already in use")
        self._prepare_dirs()
        if not (self.pgdata / "PG_VERSION").exists():
            self.progress(f"postgres: initdb in {self.pgdata}")
            initdb = [
                str(self._bin / "initdb"),
                "-D",
                str(self.pgdata),
                "-U",
                self.user,
            ]
            self._run([*initdb, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"])
            with open(self.pgdata / "postgresql.conf", "a", encoding="utf-8") as conf:
                conf.write("\ninclude_if_exists = 'tocsin.conf'\n")
        self._write_conf()
        pg_ctl = [str(self._bin / "pg_ctl"), "start", "-D", str(self.pgdata), "-w"]
        wait = ["-t", str(max(1, int(timeout))), "-l", str(self.log_file)]
        self._run([*pg_ctl, *wait], timeout=timeout + 10)
        self._running = True
        atexit.register(self.stop)
        try:
            self._wait_ready(started + timeout)
        except BaseException:
            self.stop()
            raise
        elapsed = time.monotonic() - started
        self.progress(f"postgres: ready on {self.host}:{self.port} in {elapsed:.1f}s")
        return self.url

    def create_database(self, name: str) -> str:
        """Create a fresh, empty database ``name`` and return its SQLAlchemy URL."""
        if not _DB_NAME.match(name):
            raise ValueError(f"invalid database name {name!r}: use letters, digits, _")
        if not self._running:
            raise PostgresLocalError("the cluster is not running; call start() first")

        async def _create() -> None:
            conn = await asyncpg.connect(self.dsn(), timeout=10)
            try:
                await conn.execute(f'CREATE DATABASE "{name}"')
            finally:
                await conn.close()

        run_coro_sync(_create)
        return self.database_url(name)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the server with ``pg_ctl stop -m fast`` (then immediate). Idempotent."""
        atexit.unregister(self.stop)
        if not self._running or self._bin is None:
            return
        self._running = False
        stop = [str(self._bin / "pg_ctl"), "stop", "-D", str(self.pgdata), "-w", "-m"]
        wait = ["-t", str(max(1, int(timeout)))]
        done = self._run([*stop, "fast", *wait], check=False, timeout=timeout + 10)
        if done.returncode != 0 and (self.pgdata / "postmaster.pid").exists():
            self._run([*stop, "immediate", *wait], check=False, timeout=timeout + 10)
        if self._tmp_socket_dir is not None:
            shutil.rmtree(self._tmp_socket_dir, ignore_errors=True)
            self._tmp_socket_dir = None

    def __enter__(self) -> Self:
        """Start the cluster and return this instance."""
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the cluster."""
        self.stop()

    # -- internals --------------------------------------------------------------------

    def _run(self, cmd: list[str], *, check: bool = True, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        """Run a server binary (as ``postgres`` when root); raise with its output."""
        argv = ["runuser", "-u", _OS_USER, "--", *cmd] if self._as_root else cmd
        done = subprocess.run(
            argv,
            cwd=self.data_dir,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        if check and done.returncode != 0:
            log = ""
            if self.log_file.exists():
                text = self.log_file.read_text(errors="replace")
                log = "\n".join(text.splitlines()[-20:])
            raise PostgresLocalError(
                f"`{shlex.join(argv)}` failed (exit {done.returncode}):\n{done.stdout}{done.stderr}\n{log}"
            )
        return done

    def _prepare_dirs(self) -> None:
        """Create the directories; as root, chown them and make parents traversable."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if len(str(self.socket_dir)) > _SOCKET_DIR_MAX:
            # too long for a unix socket path: fall back to a short private directory
            self.socket_dir = Path(tempfile.mkdtemp(prefix="tocsin-pg-"))
            self._tmp_socket_dir = self.socket_dir
        self.socket_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self._as_root:
            return
        for parent in self.data_dir.parents:
            mode = parent.stat().st_mode
            if not mode & stat.S_IXOTH:
                self.progress(f"postgres: making {parent} traversable (o+x) for postgres")
                os.chmod(parent, stat.S_IMODE(mode) | stat.S_IXOTH)
        for path in (self.data_dir, self.socket_dir, self.log_file):
            if path.exists():
                shutil.chown(path, _OS_USER, _OS_USER)

    def _write_conf(self) -> None:
        """Write the settings we own (port, addresses, socket dir, speed knobs)."""
        settings = {
            "listen_addresses": _conf_quote(self.host),
            "port": str(self.port),
            "unix_socket_directories": _conf_quote(str(self.socket_dir)),
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_connections": "200",
        }
        path = self.pgdata / "tocsin.conf"
        path.write_text("".join(f"{k} = {v}\n" for k, v in settings.items()))
        if self._as_root:
            shutil.chown(path, _OS_USER, _OS_USER)

    def _wait_ready(self, deadline: float) -> None:
        """Poll a real asyncpg connection until the server answers or time runs out."""

        async def _ping() -> None:
            conn = await asyncpg.connect(self.dsn(), timeout=2)
            try:
                await conn.fetchval("select 1")
            finally:
                await conn.close()

        last: BaseException | None = None
        while time.monotonic() < deadline:
            try:
                run_coro_sync(_ping)
                return
            except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
                last = exc
                time.sleep(0.2)
        why = f"postgres not ready on {self.host}:{self.port}: {last!r}"
        raise PostgresLocalError(why)
