"""Real local Apache Kafka (KRaft) run from the official jars: one node, or a cluster of N.

Jars are resolved from Maven Central with ``mvn`` into a cache outside the repository
(``$TOCSIN_CACHE_DIR`` or ``~/.cache/tocsin/kafka``). Each node runs as ``java -cp
'libs/*' kafka.Kafka server.properties`` in its own process group; it logs to a file.
:class:`LocalKafka` is one combined broker+controller node (alone, a single-node cluster);
:class:`LocalKafkaCluster` runs N of them as one cluster with replicated topics.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
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

from devstack.tls import BrokerTls, broker_tls

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
# A SASL node (LocalKafka(scram_users=...)) has no listener without a login. Clients and the broker
# itself (inter-broker requests, such as transaction markers) use the SASL_SSL listener: SCRAM
# logins (users created when the storage is formatted; the broker's own is BROKER_USER), TLS with a
# certificate signed by a CA made for this node. The controller listener is SASL_SSL too, with PLAIN
# (KRaft cannot check SCRAM there: the credentials live in the metadata the controller serves). The
# broker's and the controller's passwords are random, made once per data directory, and written
# only to files of mode 0600 (server.properties, and the format's argument file, deleted after it).
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
BROKER_USER = "tocsin-local-broker"
_BROKER_MECHANISM = "SCRAM-SHA-512"
_SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_INTERNAL_SECRETS = "internal-logins.json"  # {"broker": password, "controller": password}, mode 0600
_SCRAM_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
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

# A cluster replicates everything three ways (fewer with fewer nodes) and acknowledges an
# acks=all write once two replicas have it, so one node can die without losing a record or
# refusing writes. A dead node is fenced (its partitions get new leaders, ISRs shrink) after
# broker.session.timeout.ms: 9 s by Kafka's default, 4 s here, so writes stall for less time.
_CLUSTER_DEFAULTS = {
    "broker.session.timeout.ms": "4000",
    "broker.heartbeat.interval.ms": "1000",
    "unclean.leader.election.enable": "false",
}


def cluster_properties(replication_factor: int, min_insync_replicas: int) -> dict[str, str]:
    """Broker properties replicating every topic (the internal ones too) ``replication_factor`` ways."""
    rf, isr = str(replication_factor), str(min_insync_replicas)
    return {
        **_CLUSTER_DEFAULTS,
        "default.replication.factor": rf,
        "min.insync.replicas": isr,
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": isr,
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": isr,
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
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """Return ``count`` distinct TCP ports that are free on ``host`` right now."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))  # held open until all are chosen, so no port is chosen twice
            ports.append(int(sock.getsockname()[1]))
        return ports


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


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable and writable by its owner only (from its creation on)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a file that existed keeps its mode through O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def _argfile_line(arg: str) -> str:
    """``arg`` as one line of a Java launcher argument file: quoted, its backslashes escaped."""
    if any(c in arg for c in '"\n\r'):
        raise KafkaLocalError(f"cannot pass {arg!r} in an argument file")
    return '"' + arg.replace("\\", "\\\\") + '"\n'


def _log4j2_config(log_file: Path) -> str:
    """Return a log4j2 properties config sending broker logs to ``log_file`` only."""
    text = _LOG4J2.format(log_file=str(log_file).replace("\\", "\\\\"))
    for i, name in enumerate(_INFO_LOGGERS):
        text += f"logger.l{i}.name = kafka.server.{name}\nlogger.l{i}.level = INFO\n"
    return text


async def _probe(bootstrap: str, wait_seconds: float, **security: Any) -> set[int]:
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
        progress: Callable[[str], None] = _stderr,
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
            if not (_SCRAM_NAME.fullmatch(user) and _SCRAM_NAME.fullmatch(password)):
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
        path = self.data_dir / _INTERNAL_SECRETS
        if not path.exists():
            made = {"broker": secrets.token_urlsafe(24), "controller": secrets.token_urlsafe(24)}
            _write_private(path, json.dumps(made))
        loaded: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
        return loaded

    def _probe_security(self) -> dict[str, Any]:
        """What :func:`_probe` needs to reach this node: nothing for PLAINTEXT; the broker's own
        SCRAM login over TLS for a SASL node."""
        if not self.scram_users:
            return {}
        return {
            "security_protocol": "SASL_SSL",
            "ssl_context": ssl.create_default_context(cafile=str(self.ca_file)),
            "sasl_mechanism": _BROKER_MECHANISM,
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
            **_BROKER_DEFAULTS,
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.quorum_voters,
            "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{cport}",
            "advertised.listeners": f"PLAINTEXT://{host}:{port}",
            "log.dirs": str(self.data_dir / "logs"),
            **self._sasl_ssl_properties(),
            **self.extra_properties,
        }
        path = self.data_dir / "server.properties"
        # a multi-line value (the PEM ones) as one line: java.util.Properties reads "\\n" as a newline;
        # readable by its owner only: it holds the TLS key and, on a SASL node, the internal passwords
        _write_private(path, "".join(f"{k}={v}".replace("\n", "\\n") + "\n" for k, v in props.items()))
        log4j2 = _log4j2_config(self.log_file)
        (self.data_dir / "log4j2.properties").write_text(log4j2, encoding="utf-8")
        return path

    def _sasl_ssl_properties(self) -> dict[str, str]:
        """The listeners and security of a SASL node (empty for a PLAINTEXT one): SASL_SSL only."""
        if not self.scram_users:
            return {}
        host, port, cport = self.host, self.port, self.controller_port
        tls = self._broker_tls()
        internal = self._internal_secrets()
        broker, controller = internal["broker"], internal["controller"]
        props = {
            "listeners": f"SASL_SSL://{host}:{port},CONTROLLER://{host}:{cport}",
            "advertised.listeners": f"SASL_SSL://{host}:{port}",
            "listener.security.protocol.map": "SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL",
            "inter.broker.listener.name": "SASL_SSL",
            "sasl.mechanism.inter.broker.protocol": _BROKER_MECHANISM,
            "sasl.enabled.mechanisms": ",".join(SCRAM_MECHANISMS),
            "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": (
                f'{_PLAIN_MODULE} required username="controller" password="{controller}" '
                f'user_controller="{controller}";'
            ),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.certificate.chain": tls.chain_pem,
            "ssl.keystore.key": tls.key_pem,
            # the broker is a TLS client of its own listeners (inter-broker, controller)
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": tls.ca_file.read_text(encoding="utf-8"),
        }
        for mechanism in SCRAM_MECHANISMS:
            props[f"listener.name.sasl_ssl.{mechanism.lower()}.sasl.jaas.config"] = _SCRAM_LOGIN
        # the broker logs in to its own listener as BROKER_USER (the server side ignores these)
        props[f"listener.name.sasl_ssl.{_BROKER_MECHANISM.lower()}.sasl.jaas.config"] = (
            f'{_SCRAM_LOGIN[:-1]} username="{BROKER_USER}" password="{broker}";'
        )
        return props

    def _format(self, jvm: list[str], props: Path) -> None:
        """Format KRaft storage unless ``meta.properties`` shows it is already done.

        SCRAM credentials live in the cluster metadata, so they are added here (``--add-scram``, which
        the tool reads from its arguments only): the main class and its arguments go in a Java
        launcher argument file (``java @file``, mode 0600, deleted afterwards), so that no command
        line (``/proc/<pid>/cmdline``, ``ps``) shows a password."""
        if (self.data_dir / "logs" / "meta.properties").exists():
            return
        self.progress(f"kafka: formatting storage of {self.name}")
        tool = ["kafka.tools.StorageTool", "format", "-t", self.cluster_id or _cluster_id(), "-c", str(props)]
        logins = dict(self.scram_users)
        if self.scram_users:
            logins[BROKER_USER] = self._internal_secrets()["broker"]
        for user, password in logins.items():
            for mechanism in SCRAM_MECHANISMS:
                tool += ["--add-scram", f"{mechanism}=[name={user},password={password}]"]
        argfile = self.data_dir / "format.args"
        _write_private(argfile, "".join(_argfile_line(arg) for arg in tool))
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
                probe = partial(_probe, bootstrap, max(remaining, 0.5), **self._probe_security())
                ready = self._log_says_started()
            else:
                probe = partial(_probe, bootstrap, min(5.0, max(remaining, 0.5)))
                ready = True
            if ready and port_open(self.host, self.port) and self.node_id in run_coro_sync(probe):
                return
            time.sleep(0.25)


class LocalKafkaCluster:
    """N KRaft nodes (each a broker and a controller voter) on loopback, as one cluster.

    Topics are replicated ``min(3, nodes)`` ways with ``min.insync.replicas`` one less (at
    least 1), the internal topics (consumer offsets, transaction state) too, so a three-node
    cluster keeps accepting ``acks=all`` writes with one node down. Every node it starts it
    stops (``stop()``, also at interpreter exit); ``kill_node(i)`` is ``kill -9`` of one.
    """

    host = LocalKafka.host

    def __init__(
        self,
        data_dir: Path,
        nodes: int = 3,
        *,
        version: str = DEFAULT_VERSION,
        heap: str = "512m",
        cache_dir: Path | None = None,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        extra_properties: Mapping[str, str] | None = None,
        progress: Callable[[str], None] = _stderr,
        base_port: int | None = None,
    ) -> None:
        """Configure (but do not start) ``nodes`` nodes under ``data_dir/node<id>``.

        Node ``i`` (1-based) listens on ``base_port + i - 1`` and its controller on
        ``base_port + nodes + i - 1``; without ``base_port``, on free ports chosen now.
        """
        if nodes < 1:
            raise ValueError("a cluster needs at least one node")
        self.data_dir = Path(data_dir).resolve()
        self.replication_factor = replication_factor or min(3, nodes)
        self.min_insync_replicas = min_insync_replicas or max(1, self.replication_factor - 1)
        if not 1 <= self.min_insync_replicas <= self.replication_factor <= nodes:
            why = f"{self.min_insync_replicas} <= {self.replication_factor} <= {nodes}"
            raise ValueError(f"need 1 <= min.insync.replicas <= replication factor <= nodes: {why}")
        self.progress = progress
        self.cluster_id = _cluster_id()
        ports = free_ports(2 * nodes, self.host) if base_port is None else list(range(base_port, base_port + 2 * nodes))
        voters = ",".join(f"{i + 1}@{self.host}:{ports[nodes + i]}" for i in range(nodes))
        props = {**cluster_properties(self.replication_factor, self.min_insync_replicas), **(extra_properties or {})}
        self.nodes = [
            LocalKafka(
                self.data_dir / f"node{i + 1}",
                version=version,
                port=ports[i],
                controller_port=ports[nodes + i],
                heap=heap,
                cache_dir=cache_dir,
                extra_properties=props,
                progress=progress,
                node_id=i + 1,
                quorum_voters=voters,
                cluster_id=self.cluster_id,
                name=f"node {i + 1}",
            )
            for i in range(nodes)
        ]

    @property
    def bootstrap(self) -> str:
        """Every node's ``host:port``, comma-separated (clients need only one to be up)."""
        return ",".join(node.bootstrap for node in self.nodes)

    def is_running(self) -> bool:
        """Return True while any node's JVM is alive."""
        return any(node.is_running() for node in self.nodes)

    def node(self, node_id: int) -> LocalKafka:
        """The node with this Kafka ``node.id`` (1-based)."""
        return self.nodes[node_id - 1]

    def start(self, timeout: float = 120.0) -> str:
        """Start every node that is not running; wait until all are live brokers.

        Returns the bootstrap list. On failure every node is stopped again.
        """
        started = time.monotonic()
        try:
            waiting = [node for node in self.nodes if not node.is_running()]
            for node in waiting:  # a node answers only once a quorum of controllers runs
                node.launch()
            atexit.register(self.stop)  # after the nodes' own: at exit it runs first, stopping all at once
            for node in waiting:
                node.wait_ready(started + timeout)
        except BaseException:
            self.stop()
            raise
        elapsed = time.monotonic() - started
        self.progress(f"kafka: {len(self.nodes)}-node cluster ready on {self.bootstrap} in {elapsed:.1f}s")
        return self.bootstrap

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every node: all are asked at once (a lone survivor could wait for a quorum),
        then each is killed if still running after ``timeout``. Idempotent."""
        atexit.unregister(self.stop)
        for node in self.nodes:
            node.terminate()
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            node.stop(max(1.0, deadline - time.monotonic()))

    def kill_node(self, node_id: int) -> None:
        """``kill -9`` one node (by ``node.id``)."""
        self.progress(f"kafka: kill -9 node {node_id} (pid {self.node(node_id).pid})")
        self.node(node_id).kill()

    def stop_node(self, node_id: int, timeout: float = 30.0) -> None:
        """Stop one node (controlled shutdown)."""
        self.node(node_id).stop(timeout)

    def restart_node(self, node_id: int, timeout: float = 90.0) -> None:
        """Start a stopped or killed node on its data; wait until it is a live broker again."""
        node = self.node(node_id)
        others = [n.bootstrap for n in self.nodes if n is not node and n.is_running()]
        started = time.monotonic()
        node.launch()
        try:
            node.wait_ready(started + timeout, ",".join(others) or None)
        except BaseException:
            node.stop()
            raise
        self.progress(f"kafka: node {node_id} back on {node.bootstrap} in {time.monotonic() - started:.1f}s")

    def live_brokers(self, timeout: float = 5.0) -> set[int]:
        """The node ids the cluster currently lists as live brokers."""
        running = ",".join(n.bootstrap for n in self.nodes if n.is_running())
        return run_coro_sync(partial(_probe, running, timeout)) if running else set()

    def leaders(self, topics: list[str], timeout: float = 10.0) -> dict[tuple[str, int], int]:
        """The leader node id of every partition of ``topics`` (-1: none right now)."""
        running = ",".join(n.bootstrap for n in self.nodes if n.is_running()) or self.bootstrap
        return run_coro_sync(partial(_leaders, running, topics, timeout))

    def __enter__(self) -> Self:
        """Start the cluster and return this instance."""
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the cluster."""
        self.stop()


async def _leaders(bootstrap: str, topics: list[str], wait_seconds: float) -> dict[tuple[str, int], int]:
    """The leader node id of every partition of ``topics``."""
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=int(wait_seconds * 1000), client_id="tocsin-local-kafka-probe"
    )
    await asyncio.wait_for(admin.start(), wait_seconds)
    try:
        described = await asyncio.wait_for(admin.describe_topics(topics), wait_seconds)
        return {(t["topic"], int(p["partition"])): int(p["leader"]) for t in described for p in t["partitions"]}
    finally:
        with contextlib.suppress(KafkaError, OSError, TimeoutError):
            await admin.close()
