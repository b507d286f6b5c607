"""Session fixtures that start the real components: Kafka and PostgreSQL."""

from __future__ import annotations

import fcntl
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devstack.kafka import LocalKafka
from tests.support.postgres_local import LocalPostgres, find_pg_bin
from tests.support.scaling import Churn, churn_workers, stop_checked
from tests.support.stack import Stack


@pytest.fixture(autouse=True)
def _heavy_alone(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A test marked ``heavy`` (it saturates both cores for minutes: several workers, a broker
    cluster, thousands of publishes, and bounds in seconds) runs while no other heavy test of the
    same run does: the two test processes of ``make test`` take an exclusive lock for it. Lighter
    tests still run beside it."""
    if request.node.get_closest_marker("heavy") is None:
        yield
        return
    # the run's directory, shared by its test processes (each has its own basetemp below it)
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    with open(shared / "heavy.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # waits for the other process's heavy test to end
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


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
    # No e2e test passes with a record its stage never applied (every source partition applied to
    # its last stable offset: tests/support/tails.py), nor with an ERROR line in a worker's log (an
    # ERROR means an operator must act) other than those the test provokes on purpose, named by its
    # ``@pytest.mark.worker_errors(regex, ...)``.
    stop_checked(stacks, allowed)


# ``make test``'s two processes (pytest-xdist, --dist loadfile) take files in collection order, one
# at a time as each runs low: the longest files first (their durations in a full run), so the two
# end together instead of one running test_scaling.py alone at the end.
_LONGEST_FIRST = (
    "tests/e2e/test_scaling.py",
    "tests/e2e/test_faults.py",
    "tests/e2e/test_cluster.py",
    "tests/e2e/test_recovery_progress.py",
    "tests/e2e/test_actions.py",
    "tests/e2e/test_event_control.py",
    "tests/e2e/test_partitions.py",
    "tests/e2e/",
    "tests/api/test_openapi_fuzz.py",
    "tests/integration/",
    "tests/streams/",
    "tests/api/",
)


def _file_rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    for rank, prefix in enumerate(_LONGEST_FIRST):
        if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
            return rank
    return len(_LONGEST_FIRST)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """In an xdist worker (which collects; xdist clears its ``numprocesses``), whole files reordered
    longest first (a stable sort: a file's tests keep their order and stay together); without xdist,
    pytest's order."""
    result = yield
    if hasattr(config, "workerinput"):
        items.sort(key=_file_rank)
    return result


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
