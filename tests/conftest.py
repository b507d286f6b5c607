"""Session fixtures that start the real components: Kafka and PostgreSQL."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devstack.kafka import LocalKafka
from tests.support.postgres_local import LocalPostgres, find_pg_bin
from tests.support.scaling import Churn, churn_workers, stop_checked
from tests.support.stack import Stack


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafka]:
    """One real broker for the session; tests use fresh topic names on it."""
    broker = LocalKafka(tmp_path_factory.mktemp("kafka"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalPostgres]:
    """A throwaway PostgreSQL cluster. In CI the server is installed, so this never skips there."""
    if find_pg_bin() is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install PostgreSQL (.ci/run does): no server binaries found")
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql; .ci/run installs it)")
    server = LocalPostgres(tmp_path_factory.mktemp("pg"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def stack_factory(kafka: LocalKafka, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., Stack]]:
    """Start API + worker stacks on the session broker; everything stops after the test."""
    allowed = [pattern for mark in request.node.iter_markers("worker_errors") for pattern in mark.args]
    stacks: list[Stack] = []

    def make(**kwargs: object) -> Stack:
        stack = Stack(tmp_path / f"stack{len(stacks)}", kafka.bootstrap, **kwargs)  # type: ignore[arg-type]
        stacks.append(stack)
        return stack

    yield make
    # No e2e test passes with a record an agent never received: every worker's log and, for the
    # live ones, /metrics (tocsin_record_gaps_total) must show 0 records given up as lost. Nor with
    # an ERROR line in a worker's log (an ERROR means an operator must act) other than those the test
    # provokes on purpose, named by its ``@pytest.mark.worker_errors(regex, ...)``.
    stop_checked(stacks, allowed)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Nothing the tests started may outlive them: fail the run if a child process is left. Under
    pytest-xdist each worker process checks its own children; the controller's are the workers."""
    if getattr(session.config.option, "numprocesses", None) and not hasattr(session.config, "workerinput"):
        return
    import psutil

    leftovers = [p for p in psutil.Process().children(recursive=True) if p.is_running()]
    _gone, alive = psutil.wait_procs(leftovers, timeout=10)
    if alive:
        names = ", ".join(f"{p.pid} {' '.join(p.cmdline()[:3])}" for p in alive)
        for proc in alive:
            proc.kill()
        print(f"\nprocesses left running by the tests (now killed): {names}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str | None:
    """The database a test module's stacks run on: SQLite (None: the stack's own file) or a fresh
    database on the session's PostgreSQL cluster. A module that takes it runs once on each."""
    if request.param == "sqlite":
        return None
    server: LocalPostgres = request.getfixturevalue("postgres")
    name = "m_" + "".join(c if c.isalnum() else "_" for c in request.module.__name__.rsplit(".", 1)[-1])[:50]
    return server.create_database(f"{name}_{os.getpid()}")


@pytest.fixture
def fresh_database(database: str | None, request: pytest.FixtureRequest) -> str | None:
    """Like ``database`` (the module runs on each), but a database of its own for every test: for
    tests that start their own stacks and read the whole database."""
    if database is None:
        return None
    server: LocalPostgres = request.getfixturevalue("postgres")
    return server.create_database(f"t_{uuid.uuid4().hex[:16]}")


@pytest.fixture
def worker_churn() -> Callable[..., Churn]:
    """Run the scaling scenario (two workers join, one is killed with ``kill -9`` and restarted on
    its data directory) around a test's own load: ``worker_churn(stack, flowed)``, where ``flowed()``
    counts the load so far (tests/support/scaling.py: churn_workers)."""
    return churn_workers
