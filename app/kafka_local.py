"""A real local single-node Apache Kafka broker (KRaft) run from the official jars.

Jars are resolved from Maven Central with ``mvn`` into a cache outside the repository
(``$TOCSIN_CACHE_DIR`` or ``~/.cache/tocsin/kafka``). The broker runs as ``java -cp
'libs/*' kafka.Kafka server.properties`` in its own process group; it logs to a file.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Self, TypeVar

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

DEFAULT_VERSION = "4.1.1"
LOG4J_VERSION = "2.24.3"
SLF4J_VERSION = "2.0.16"
_MARKER = ".resolved"
_HINT = "install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless maven)"

T = TypeVar("T")

# the broker runtime plus log4j2 + slf4j 2 so the broker's logging binds
_DEPS = (
    ("org.apache.kafka", "kafka_2.13", "{kafka}"),
    ("org.apache.logging.log4j", "log4j-slf4j2-impl", LOG4J_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
    ("org.slf4j", "slf4j-api", SLF4J_VERSION),
)
_DEP = "<dependency><groupId>{}</groupId><artifactId>{}</artifactId><version>{}</version>"
_POM = (
    '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    "<groupId>tocsin</groupId><artifactId>kafka-runtime</artifactId><version>{kafka}"
    "</version><packaging>pom</packaging>\n<dependencies>\n"
    + "".join(_DEP.format(*dep) + "</dependency>\n" for dep in _DEPS)
    + "</dependencies></project>\n"
)

# Root at WARN, broker lifecycle at INFO. shutdownHook=disable keeps logging alive while
# Kafka's own shutdown hook runs (the file appender flushes every line anyway).
_LOG4J2 = """status = warn
name = tocsin-local-kafka
shutdownHook = disable
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log_file}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
"""
_INFO_LOGGERS = ("KafkaRaftServer", "BrokerServer", "ControllerServer", "SharedServer")

_BROKER_DEFAULTS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "auto.create.topics.enable": "false",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}


class KafkaLocalError(RuntimeError):
    """Raised when the local broker cannot be resolved, formatted or started."""


def _stderr(message: str) -> None:
    """Default progress sink: one line on stderr."""
    print(message, file=sys.stderr, flush=True)


def default_cache_dir() -> Path:
    """Return the jar cache root: ``$TOCSIN_CACHE_DIR`` or ``~/.cache/tocsin/kafka``."""
    env = os.environ.get("TOCSIN_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache/tocsin/kafka"


def _require_tool(name: str) -> str:
    """Return the path of ``name`` on PATH or raise a clear, actionable error."""
    found = shutil.which(name)
    if found is None:
        raise KafkaLocalError(f"`{name}` is not on PATH; local Kafka needs it: {_HINT}")
    return found


def resolve_jars(
    version: str = DEFAULT_VERSION,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] = _stderr,
) -> Path:
    """Resolve the broker jars with Maven; return the ``libs`` directory holding them.

    Cached in ``<cache_dir>/<version>/libs``; a marker file records a completed run so
    later calls return at once, and a file lock serialises concurrent resolvers.
    """
    root = (cache_dir or default_cache_dir()) / version
    libs, marker = root / "libs", root / _MARKER
    if marker.exists():
        return libs
    _require_tool("java")
    mvn = _require_tool("mvn")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():  # another process finished while we waited for the lock
            return libs
        progress(f"kafka: resolving jars (first run downloads ~100 MB) into {root}…")
        started = time.monotonic()
        (root / "pom.xml").write_text(_POM.format(kafka=version), encoding="utf-8")
        goal, out = "dependency:copy-dependencies", f"-DoutputDirectory={libs}"
        cmd = [mvn, "-q", "-B", "-f", str(root / "pom.xml"), goal, out]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        jars = sorted(libs.glob("*.jar")) if libs.is_dir() else []
        if done.returncode != 0 or not jars:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
            why = f"mvn could not resolve Kafka {version} (exit {done.returncode})"
            raise KafkaLocalError(f"{why}:\n{tail}")
        marker.write_text("".join(f"{j.name}\n" for j in jars), encoding="utf-8")
        elapsed = time.monotonic() - started
        progress(f"kafka: {len(jars)} jars ready in {elapsed:.1f}s")
    return libs


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """Return True if something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def run_coro_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine in a fresh event loop, even if this thread already runs one.

    With a running loop here, the coroutine runs in a helper thread (this one blocks).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with ThreadPoolExecutor(1, thread_name_prefix="tocsin-sync-coro") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


def _cluster_id() -> str:
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


def _log4j2_config(log_file: Path) -> str:
    """Return a log4j2 properties config sending broker logs to ``log_file`` only."""
    text = _LOG4J2.format(log_file=str(log_file).replace("\\", "\\\\"))
    for i, name in enumerate(_INFO_LOGGERS):
        text += f"logger.l{i}.name = kafka.server.{name}\nlogger.l{i}.level = INFO\n"
    return text


async def _probe(bootstrap: str, wait_seconds: float) -> bool:
    """Return True if the broker answers a metadata request listing a broker."""
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap,
        request_timeout_ms=max(1000, int(wait_seconds * 1000)),
        client_id="tocsin-local-kafka-probe",
    )
    try:
        await asyncio.wait_for(admin.start(), wait_seconds)
        cluster = await asyncio.wait_for(admin.describe_cluster(), wait_seconds)
        return bool(cluster.get("brokers"))
    except (KafkaError, OSError, TimeoutError):  # not ready yet: the caller polls again
        return False
    finally:
        with contextlib.suppress(KafkaError, OSError, TimeoutError):
            await admin.close()


class LocalKafka:
    """A single-node KRaft Kafka broker (combined broker+controller) on loopback.

    Ports are chosen once per instance, so ``stop()`` then ``start()`` brings the
    broker back on the same address with the same data.
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
        progress: Callable[[str], None] = _stderr,
    ) -> None:
        """Configure (but do not start) a broker whose state lives in ``data_dir``."""
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
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        """The ``host:port`` bootstrap address of the broker."""
        return f"{self.host}:{self.port}"

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
        libs = resolve_jars(self.version, self.cache_dir, self.progress)
        java = _require_tool("java")
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
        self.progress(f"kafka: starting broker on {self.bootstrap}; log: {log}")
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
        try:
            self._wait_ready(started + timeout)
        except BaseException:
            self.stop()
            raise
        elapsed = time.monotonic() - started
        self.progress(f"kafka: broker ready on {self.bootstrap} in {elapsed:.1f}s")
        return self.bootstrap

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
                self.progress(f"kafka: broker did not stop in {timeout:.0f}s; killing")
                self._signal_group(proc, signal.SIGKILL)
                proc.wait(10)
        self._signal_group(proc, signal.SIGKILL)  # anything left in the group

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
            **_BROKER_DEFAULTS,
            "controller.quorum.voters": f"1@{host}:{cport}",
            "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{cport}",
            "advertised.listeners": f"PLAINTEXT://{host}:{port}",
            "log.dirs": str(self.data_dir / "logs"),
            **self.extra_properties,
        }
        path = self.data_dir / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        log4j2 = _log4j2_config(self.log_file)
        (self.data_dir / "log4j2.properties").write_text(log4j2, encoding="utf-8")
        return path

    def _format(self, jvm: list[str], props: Path) -> None:
        """Format KRaft storage unless ``meta.properties`` shows it is already done."""
        if (self.data_dir / "logs" / "meta.properties").exists():
            return
        self.progress("kafka: formatting storage")
        tool = ["kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c"]
        cmd = [*jvm, *tool, str(props)]
        done = subprocess.run(cmd, cwd=self.data_dir, capture_output=True, check=False)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")
            raise KafkaLocalError(f"kafka storage format failed:\n{output}")

    def _wait_ready(self, deadline: float) -> None:
        """Poll until the broker answers a metadata request; fail fast if it exits."""
        while True:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                code = None if proc is None else proc.returncode
                why = f"kafka broker exited (code {code}) during start"
                raise KafkaLocalError(f"{why}; log tail:\n{_tail(self.log_file)}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                why = f"kafka broker not ready on {self.bootstrap}"
                raise KafkaLocalError(f"{why}; log tail:\n{_tail(self.log_file)}")
            # a cheap TCP check first keeps aiokafka from logging connection errors
            probe = partial(_probe, self.bootstrap, min(5.0, max(remaining, 0.5)))
            if port_open(self.host, self.port) and run_coro_sync(probe):
                return
            time.sleep(0.25)
