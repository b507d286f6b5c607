"""Real local Apache Kafka (KRaft) run from the official jars: one node, or a cluster of N.

Jars are resolved from Maven Central with ``mvn`` into a cache outside the repository
(``$TOCSIN_CACHE_DIR`` or ``~/.cache/tocsin/kafka``). Each node runs as ``java -cp
'libs/*' kafka.Kafka server.properties`` in its own process group; it logs to a file.
:class:`LocalKafka` is one combined broker+controller node (alone, a single-node cluster);
:class:`LocalKafkaCluster` (kafka_cluster.py) runs N of them as one cluster with replicated topics.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import json
import os
import secrets
import signal
import ssl
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Self

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from devstack.broker_config import (
    BROKER_DEFAULTS,
    BROKER_MECHANISM,
    BROKER_USER,
    INTERNAL_SECRETS,
    SCRAM_MECHANISMS,
    SCRAM_NAME,
    argfile_line,
    log4j2_config,
    sasl_ssl_properties,
    write_private,
)
from devstack.jars import DEFAULT_VERSION, KafkaLocalError, require_tool, resolve_jars, stderr_progress
from devstack.ports import free_port, port_open, run_coro_sync
from devstack.tls import BrokerTls, broker_tls


def new_cluster_id() -> str:
    """Return a random 22-character base64url cluster id (like ``random-uuid``)."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):  # a leading dash would read as a CLI flag
            return cid


def _tail(path: Path, lines: int = 40) -> str:
    """Return the last ``lines`` lines of a text file, or a note if it is unreadable."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"(no log: {exc})"
    return "\n".join(text.splitlines()[-lines:])


async def probe_brokers(bootstrap: str, wait_seconds: float, **security: Any) -> set[int]:
    """Return the ids of the live brokers a metadata request lists (empty if none answers).

    A KRaft node appears there once the controller quorum has registered and unfenced it.
    ``security``: the client's TLS and SASL arguments (:meth:`LocalKafka._probe_security`).
    """
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap,
        request_timeout_ms=max(1000, int(wait_seconds * 1000)),
        client_id="tocsin-local-kafka-probe",
        **security,
    )
    try:
        await asyncio.wait_for(admin.start(), wait_seconds)
        cluster = await asyncio.wait_for(admin.describe_cluster(), wait_seconds)
        return {int(broker["node_id"]) for broker in cluster.get("brokers") or ()}
    except (KafkaError, OSError, TimeoutError):  # not ready yet: the caller polls again
        return set()
    finally:
        with contextlib.suppress(KafkaError, OSError, TimeoutError):
            await admin.close()


class LocalKafka:
    """A KRaft Kafka node (combined broker+controller) on loopback.

    Alone (the default) it is a single-node cluster. :class:`LocalKafkaCluster` gives each of
    its nodes a ``node_id``, the shared ``quorum_voters`` and ``cluster_id``. Ports are chosen
    once per instance, so ``stop()`` (or ``kill()``) then ``start()`` brings the node back on
    the same address with the same data.
    """

    host = "127.0.0.1"

    def __init__(
        self,
        data_dir: Path,
        *,
        version: str = DEFAULT_VERSION,
        port: int | None = None,
        controller_port: int | None = None,
        heap: str = "512m",
        log_file: Path | None = None,
        cache_dir: Path | None = None,
        extra_properties: Mapping[str, str] | None = None,
        progress: Callable[[str], None] = stderr_progress,
        node_id: int = 1,
        quorum_voters: str | None = None,
        cluster_id: str | None = None,
        name: str = "broker",
        scram_users: Mapping[str, str] | None = None,
    ) -> None:
        """Configure (but do not start) a node whose state lives in ``data_dir``.

        ``quorum_voters`` (``id@host:port,...``) defaults to this node alone; ``cluster_id``
        (used when formatting storage) defaults to a random one. With ``scram_users`` (name →
        password) the client listener on ``port`` is SASL_SSL: those users log in with SCRAM-SHA-256
        or -512, and the broker's certificate is signed by a CA made for it (:attr:`ca_file`);
        its controller listener is SASL_SSL too (PLAIN, a random password): no listener takes a
        client that does not log in, and no command line holds a password.
        """
        self.data_dir = Path(data_dir).resolve()
        self.version = version
        self.port = port if port is not None else free_port(self.host)
        self.controller_port = controller_port or free_port(self.host)
        while self.controller_port == self.port:
            self.controller_port = free_port(self.host)
        self.heap = heap
        self.log_file = Path(log_file or self.data_dir / "kafka.log").resolve()
        self.cache_dir = cache_dir
        self.extra_properties = dict(extra_properties or {})
        self.progress = progress
        self.node_id = node_id
        self.quorum_voters = quorum_voters or f"{node_id}@{self.host}:{self.controller_port}"
        self.cluster_id = cluster_id
        self.name = name
        self._proc: subprocess.Popen[bytes] | None = None
        self.scram_users = dict(scram_users or {})
        for user, password in self.scram_users.items():
            if not (SCRAM_NAME.fullmatch(user) and SCRAM_NAME.fullmatch(password)):
                raise ValueError(f"SCRAM user {user!r}: names and passwords of letters, digits, '_', '.', '-'")
        if BROKER_USER in self.scram_users:
            raise ValueError(f"SCRAM user {BROKER_USER!r} is the broker's own")
        self._tls: BrokerTls | None = None
        self._log_from = 0  # the log's size when the JVM was launched: its lines after it are this run's

    @property
    def bootstrap(self) -> str:
        """The ``host:port`` bootstrap address of the broker (its SASL_SSL listener with ``scram_users``)."""
        return f"{self.host}:{self.port}"

    @property
    def security_protocol(self) -> str:
        """What clients of :attr:`bootstrap` speak: PLAINTEXT, or SASL_SSL with ``scram_users``."""
        return "SASL_SSL" if self.scram_users else "PLAINTEXT"

    @property
    def ca_file(self) -> Path:
        """The CA certificate that signed the broker's (SASL_SSL only): TOCSIN_KAFKA_SSL_CA_FILE."""
        return self._broker_tls().ca_file

    def _broker_tls(self) -> BrokerTls:
        if not self.scram_users:
            raise KafkaLocalError("this node has no TLS listener (start it with scram_users)")
        if self._tls is None:  # made once per instance: a restarted node keeps its certificate
            self._tls = broker_tls(self.data_dir / "tls")
        return self._tls

    def _internal_secrets(self) -> dict[str, str]:
        """The broker's SCRAM password and the controller listener's PLAIN one: made at the first
        start of this data directory, then read back (the broker's is in the cluster metadata)."""
        path = self.data_dir / INTERNAL_SECRETS
        if not path.exists():
            made = {"broker": secrets.token_urlsafe(24), "controller": secrets.token_urlsafe(24)}
            write_private(path, json.dumps(made))
        loaded: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
        return loaded

    def _probe_security(self) -> dict[str, Any]:
        """What :func:`probe_brokers` needs to reach this node: nothing for PLAINTEXT; the broker's own
        SCRAM login over TLS for a SASL node."""
        if not self.scram_users:
            return {}
        return {
            "security_protocol": "SASL_SSL",
            "ssl_context": ssl.create_default_context(cafile=str(self.ca_file)),
            "sasl_mechanism": BROKER_MECHANISM,
            "sasl_plain_username": BROKER_USER,
            "sasl_plain_password": self._internal_secrets()["broker"],
        }

    @property
    def pid(self) -> int | None:
        """The JVM's process id while it runs, else None."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def is_running(self) -> bool:
        """Return True while the broker JVM process is alive."""
        return self.pid is not None

    def start(self, timeout: float = 90.0) -> str:
        """Start the broker (formatting storage on first use); wait until it answers.

        Returns the bootstrap address. Raises :class:`KafkaLocalError` if the JVM exits
        or does not answer a metadata request within ``timeout`` seconds.
        """
        if self.is_running():
            return self.bootstrap
        started = time.monotonic()
        self.launch()
        try:
            self.wait_ready(started + timeout)
        except BaseException:
            self.stop()
            raise
        elapsed = time.monotonic() - started
        self.progress(f"kafka: {self.name} ready on {self.bootstrap} in {elapsed:.1f}s")
        return self.bootstrap

    def launch(self) -> None:
        """Start the JVM (formatting storage on first use) without waiting for it to answer.

        A node of a cluster answers only once a quorum of controllers runs, so a cluster
        launches every node first and then waits (:meth:`wait_ready`).
        """
        if self.is_running():
            return
        libs = resolve_jars(self.version, self.cache_dir, self.progress)
        java = require_tool("java")
        for port in (self.port, self.controller_port):
            if port_open(self.host, port):
                raise KafkaLocalError(f"port {self.host}:{port} is already in use")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        props = self._write_config()
        log4j2 = self.data_dir / "log4j2.properties"
        jvm = [java, f"-Xmx{self.heap}", "-XX:+UseG1GC", "-Djava.awt.headless=true"]
        jvm += [f"-Dlog4j2.configurationFile={log4j2}", "-cp", str(libs / "*")]
        self._format(jvm, props)
        log = self.log_file
        self._log_from = log.stat().st_size if log.exists() else 0
        self.progress(f"kafka: starting {self.name} on {self.bootstrap}; log: {log}")
        with open(log, "ab") as out:
            self._proc = subprocess.Popen(
                [*jvm, "kafka.Kafka", str(props)],
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        atexit.register(self.stop)

    def terminate(self) -> None:
        """Ask the node to shut down (SIGTERM to its process group) without waiting."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            self._signal_group(proc, signal.SIGTERM)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the broker: SIGTERM its process group, SIGKILL after ``timeout``.

        Idempotent; also registered with :mod:`atexit` while the broker runs.
        """
        proc, self._proc = self._proc, None
        atexit.unregister(self.stop)
        if proc is None:
            return
        if proc.poll() is None:
            self._signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.progress(f"kafka: {self.name} did not stop in {timeout:.0f}s; killing")
                self._signal_group(proc, signal.SIGKILL)
                proc.wait(10)
        self._signal_group(proc, signal.SIGKILL)  # anything left in the group

    def kill(self) -> None:
        """``kill -9`` the node: no controlled shutdown, no flush. ``start()`` brings it back."""
        proc, self._proc = self._proc, None
        atexit.unregister(self.stop)
        if proc is None:
            return
        self._signal_group(proc, signal.SIGKILL)
        proc.wait(10)

    def __enter__(self) -> Self:
        """Start the broker and return this instance."""
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the broker."""
        self.stop()

    @staticmethod
    def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        """Send ``sig`` to the process group led by ``proc``, if it still exists."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def _write_config(self) -> Path:
        """Write server.properties and the log4j2 config; return server.properties."""
        host, port, cport = self.host, self.port, self.controller_port
        props = {
            **BROKER_DEFAULTS,
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.quorum_voters,
            "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{cport}",
            "advertised.listeners": f"PLAINTEXT://{host}:{port}",
            "log.dirs": str(self.data_dir / "logs"),
            **(
                sasl_ssl_properties(host, port, cport, self._broker_tls(), self._internal_secrets())
                if self.scram_users
                else {}
            ),
            **self.extra_properties,
        }
        path = self.data_dir / "server.properties"
        # a multi-line value (the PEM ones) as one line: java.util.Properties reads "\\n" as a newline;
        # readable by its owner only: it holds the TLS key and, on a SASL node, the internal passwords
        write_private(path, "".join(f"{k}={v}".replace("\n", "\\n") + "\n" for k, v in props.items()))
        log4j2 = log4j2_config(self.log_file)
        (self.data_dir / "log4j2.properties").write_text(log4j2, encoding="utf-8")
        return path

    def _sasl_ssl_properties(self) -> dict[str, str]:
        host, port, cport = self.host, self.port, self.controller_port
        return sasl_ssl_properties(host, port, cport, self._broker_tls(), self._internal_secrets())

    def _format(self, jvm: list[str], props: Path) -> None:
        """Format KRaft storage unless ``meta.properties`` shows it is already done.

        SCRAM credentials live in the cluster metadata, so they are added here (``--add-scram``, which
        the tool reads from its arguments only): the main class and its arguments go in a Java
        launcher argument file (``java @file``, mode 0600, deleted afterwards), so that no command
        line (``/proc/<pid>/cmdline``, ``ps``) shows a password."""
        if (self.data_dir / "logs" / "meta.properties").exists():
            return
        self.progress(f"kafka: formatting storage of {self.name}")
        tool = ["kafka.tools.StorageTool", "format", "-t", self.cluster_id or new_cluster_id(), "-c", str(props)]
        logins = dict(self.scram_users)
        if self.scram_users:
            logins[BROKER_USER] = self._internal_secrets()["broker"]
        for user, password in logins.items():
            for mechanism in SCRAM_MECHANISMS:
                tool += ["--add-scram", f"{mechanism}=[name={user},password={password}]"]
        argfile = self.data_dir / "format.args"
        write_private(argfile, "".join(argfile_line(arg) for arg in tool))
        try:
            done = subprocess.run([*jvm, f"@{argfile}"], cwd=self.data_dir, capture_output=True, check=False)
        finally:
            argfile.unlink(missing_ok=True)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")
            raise KafkaLocalError(f"kafka storage format failed:\n{output}")

    def _log_says_started(self) -> bool:
        """Whether this run's lines of the log say the server started (KafkaRaftServer's INFO line)."""
        try:
            with open(self.log_file, "rb") as log:
                log.seek(self._log_from)
                return b"Kafka Server started" in log.read()
        except OSError:
            return False

    def wait_ready(self, deadline: float, bootstrap: str | None = None) -> None:
        """Poll (``bootstrap``, default this node) until the cluster lists this node as a live
        broker; fail fast if the JVM exits, or at ``deadline`` (a :func:`time.monotonic` time)."""
        bootstrap = bootstrap or self.bootstrap
        while True:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                code = None if proc is None else proc.returncode
                why = f"kafka {self.name} exited (code {code}) during start"
                raise KafkaLocalError(f"{why}; log tail:\n{_tail(self.log_file)}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                why = f"kafka {self.name} not ready on {self.bootstrap}"
                raise KafkaLocalError(f"{why}; log tail:\n{_tail(self.log_file)}")
            # a cheap TCP check first keeps aiokafka from logging connection errors; a SASL node is asked
            # once its log says it started: a TLS handshake cut short by the probe's timeout while the
            # JVM warms up leaves asyncio's socket unclosed (a ResourceWarning)
            if self.scram_users:
                probe = partial(probe_brokers, bootstrap, max(remaining, 0.5), **self._probe_security())
                ready = self._log_says_started()
            else:
                probe = partial(probe_brokers, bootstrap, min(5.0, max(remaining, 0.5)))
                ready = True
            if ready and port_open(self.host, self.port) and self.node_id in run_coro_sync(probe):
                return
            time.sleep(0.25)
