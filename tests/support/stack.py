"""Run the real Tocsin processes (API, worker) against a real broker, for tests and benchmarks.

Each :class:`Stack` gets fresh topic names, a fresh consumer group and its own database,
so stacks never see each other's records.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from app.identity.signing_keys import DEFAULT_KEY_FILE
from devstack.kafka import LocalKafka
from devstack.ports import free_port

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]


def wait_for(predicate: Callable[[], T | None], timeout: float, what: str, interval: float = 0.1) -> T:
    """Poll ``predicate`` until it returns a truthy value, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last value: {last!r})")


class Stack:
    def __init__(
        self,
        var_dir: Path,
        bootstrap: str,
        *,
        database_url: str | None = None,
        partitions: int = 4,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        tag = uuid.uuid4().hex[:10]
        self.root = ROOT  # the code the processes run (another release's checkout: tests/e2e/test_upgrade.py)
        self.var_dir = var_dir
        self.var_dir.mkdir(parents=True, exist_ok=True)
        self.api_port = free_port()
        self.base_url = f"http://127.0.0.1:{self.api_port}"
        self._env = {
            **os.environ,
            "TOCSIN_VAR_DIR": str(var_dir),
            "TOCSIN_KAFKA_BOOTSTRAP": bootstrap,
            "TOCSIN_TOPIC_PREFIX": f"t{tag}.",
            "TOCSIN_WORKER_ID": f"w{tag}",
            "TOCSIN_PUBLISH_PARTITIONS": str(partitions),
            "TOCSIN_API_PORT": str(self.api_port),
            # the API and the worker refuse to start without it (the default audience of credentials)
            "TOCSIN_PUBLIC_URL": self.base_url,
            "TOCSIN_ACCESS_LOG": "false",
            "PYTHONUNBUFFERED": "1",
            # Faust's stream-timeout check (an ERROR for a partition fetched but not processed) after
            # 60 s instead of 5 min, so that the longer tests' length is enough for it to fire on a
            # partition no stream reads. Not less: with 8 s, a partition a worker took over during
            # the kill -9 churn of test_scaling (recovery and rebalances on 2 loaded cores) started
            # 10 s after its assignment, an ERROR no operator would see at the real 5 min.
            "STREAM_PROCESSING_TIMEOUT": "60",
            **({"TOCSIN_DATABASE_URL": database_url} if database_url else {}),
            **(extra_env or {}),
        }
        self.api: subprocess.Popen[bytes] | None = None
        self.replicas: list[subprocess.Popen[bytes]] = []  # API replicas beyond the first (start_api_replica)
        self.workers: list[subprocess.Popen[bytes]] = []
        self.worker_logs: list[Path] = []
        self.worker_urls: list[str] = []  # each worker's /healthz, /readyz and /metrics
        self.credentials: dict[str, str] = {}

    @property
    def env(self) -> dict[str, str]:
        return dict(self._env)

    def configure(self, **env: str) -> None:
        """Set environment variables of every process started from now on (a restart with new settings)."""
        self._env.update(env)

    def _spawn(
        self, role: str, log: Path, env: dict[str, str] | None = None, command: list[str] | None = None
    ) -> subprocess.Popen[bytes]:
        """``python -m cli ROLE``, or ``python COMMAND`` (a bench's wrapper of it), with this stack's settings."""
        with open(log, "ab") as out:
            return subprocess.Popen(
                [sys.executable, *(command or ["-m", "cli", role])],
                cwd=self.root,
                env={**self._env, **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def bootstrap(self) -> dict[str, str]:
        self.credentials = self.new_organization("Test org")
        return self.credentials

    def new_organization(self, name: str) -> dict[str, str]:
        """``tocsin bootstrap --org NAME``: an organization and its owner's token (the JSON line)."""
        out = subprocess.run(
            [sys.executable, "-m", "cli", "bootstrap", "--org", name],
            cwd=self.root,
            env=self._env,
            capture_output=True,
            check=True,
            timeout=120,
        )
        credentials: dict[str, str] = json.loads(out.stdout.decode().strip().splitlines()[-1])
        return credentials

    @classmethod
    def _wait_ready(
        cls,
        proc: subprocess.Popen[bytes],
        url: str,
        log: Path,
        what: str,
        timeout: float,
        *,
        request_timeout: float = 2,
        interval: float = 0.1,
    ) -> None:
        """Until ``url``/readyz answers 200; the process exiting meanwhile fails with its log's tail."""

        def ready() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"{what} exited: {cls.tail(log)}")
            try:
                return httpx.get(f"{url}/readyz", timeout=request_timeout).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, timeout, f"the {what} to be ready", interval=interval)

    def start_api(self, timeout: float = 60) -> None:
        log = self.var_dir / "api.log"
        self.api = self._spawn("api", log)
        self._wait_ready(self.api, self.base_url, log, "API", timeout)

    def start_api_replica(self, timeout: float = 60) -> str:
        """One more API process on the same database, broker and signing key, on a port of its own
        (its transactional id and rate limits are its own); its base URL."""
        port = free_port()
        log = self.var_dir / f"api-{port}.log"
        proc = self._spawn("api", log, env={"TOCSIN_API_PORT": str(port)})
        self.replicas.append(proc)
        base = f"http://127.0.0.1:{port}"
        self._wait_ready(proc, base, log, "API replica", timeout)
        return base

    def worker_data_dir(self, name: str = "worker") -> Path:
        """Where a worker keeps its RocksDB tables (two workers of one group need two)."""
        return self.var_dir / name

    def start_worker(self, data_dir: Path | None = None) -> subprocess.Popen[bytes]:
        """Start a worker (in the stack's consumer group) keeping its tables in ``data_dir``."""
        log = self.var_dir / f"worker-{len(self.workers) + 1}.log"
        port = free_port()
        env = {"TOCSIN_WORKER_DATA_DIR": str(data_dir or self.worker_data_dir()), "TOCSIN_WORKER_PORT": str(port)}
        proc = self._spawn("worker", log, env)
        self.workers.append(proc)
        self.worker_urls.append(f"http://127.0.0.1:{port}")
        self.worker_logs.append(log)
        return proc

    def wait_worker_ready(self, index: int = -1, timeout: float = 120) -> None:
        """Until the worker's /readyz answers 200: broker and database answer, tables recovered."""
        proc, url, log = self.workers[index], self.worker_urls[index], self.worker_logs[index]
        self._wait_ready(proc, url, log, "worker", timeout, request_timeout=5, interval=0.2)

    def start(self) -> Stack:
        self.bootstrap()
        self.start_api()
        self.start_worker()
        self.wait_worker_ready()
        return self

    @property
    def org(self) -> str:
        return self.credentials["organization_id"]

    def client(self, token: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.base_url}/v1/organizations/{self.org}",
            headers={"Authorization": f"Bearer {token or self.credentials['access_token']}"},
            timeout=30,
        )

    @staticmethod
    def tail(path: Path, lines: int = 40) -> str:
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 30) -> None:
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def kill_worker(self, index: int = -1) -> None:
        """``kill -9`` a worker: no shutdown, no offset commit."""
        self._terminate(self.workers[index], signal.SIGKILL)

    def stop_worker(self, index: int = -1) -> None:
        self._terminate(self.workers[index])

    def stop_api(self) -> None:
        if self.api is not None:
            self._terminate(self.api)
            self.api = None

    @property
    def signing_key_file(self) -> Path:
        """The token signing key every API of this stack reads (created by the first to start)."""
        return self.var_dir / DEFAULT_KEY_FILE

    def stop(self) -> None:
        for proc in self.workers:
            self._terminate(proc)
        for proc in self.replicas:
            self._terminate(proc)
        if self.api is not None:
            self._terminate(self.api)

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def kafka_client_env(kafka: LocalKafka, user: str | None = None, **overrides: str | None) -> dict[str, str]:
    """The TOCSIN_KAFKA_* variables a process needs to reach ``kafka``: its bootstrap address and,
    for a SASL_SSL node (``LocalKafka(scram_users=...)``), TLS with the node's CA and a SCRAM-SHA-256
    login as ``user`` (default: its first user). ``overrides`` (without the TOCSIN_KAFKA_ prefix,
    ``SASL_PASSWORD="wrong"``) replace or add variables; None removes one."""
    env = {"TOCSIN_KAFKA_BOOTSTRAP": kafka.bootstrap, "TOCSIN_KAFKA_SECURITY_PROTOCOL": kafka.security_protocol}
    if kafka.scram_users:
        name = user or next(iter(kafka.scram_users))
        env |= {
            "TOCSIN_KAFKA_SSL_CA_FILE": str(kafka.ca_file),
            "TOCSIN_KAFKA_SASL_MECHANISM": "SCRAM-SHA-256",
            "TOCSIN_KAFKA_SASL_USERNAME": name,
            "TOCSIN_KAFKA_SASL_PASSWORD": kafka.scram_users[name],
        }
    for name, value in overrides.items():
        if value is None:
            env.pop(f"TOCSIN_KAFKA_{name}", None)
        else:
            env[f"TOCSIN_KAFKA_{name}"] = value
    return env
