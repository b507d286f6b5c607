"""``tocsin run`` keeps the API and the worker running (found from outside: a worker killed with
``kill -9`` under ``make run`` stopped the API and the broker with it, and nothing came back)."""

from __future__ import annotations

from typing import Any

from cli.run import RESTARTS_PER_MINUTE, Supervisor


class FakeProcess:
    def __init__(self, role: str) -> None:
        self.role = role
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode


def _supervisor(now: list[float]) -> tuple[Supervisor, list[FakeProcess]]:
    started: list[FakeProcess] = []

    def start(role: str) -> Any:
        started.append(FakeProcess(role))
        return started[-1]

    supervisor = Supervisor(start, clock=lambda: now[0])
    supervisor.launch("api")
    supervisor.launch("worker")
    return supervisor, started


def test_a_worker_that_exits_is_started_again_and_the_api_is_left_alone() -> None:
    now = [0.0]
    supervisor, started = _supervisor(now)
    started[1].returncode = -9  # kill -9
    assert supervisor.check() is None
    assert [p.role for p in started] == ["api", "worker", "worker"]
    assert supervisor.procs["worker"] is started[2] and supervisor.procs["api"] is started[0]
    assert supervisor.check() is None and len(started) == 3  # running: nothing more


def test_a_process_that_keeps_exiting_stops_everything() -> None:
    now = [0.0]
    supervisor, _started = _supervisor(now)
    for _ in range(RESTARTS_PER_MINUTE):
        supervisor.procs["worker"].returncode = 1  # type: ignore[attr-defined]
        assert supervisor.check() is None
        now[0] += 5
    supervisor.procs["worker"].returncode = 1  # type: ignore[attr-defined]
    assert supervisor.check() == "worker"


def test_exits_a_minute_apart_are_restarted_for_ever() -> None:
    now = [0.0]
    supervisor, started = _supervisor(now)
    for _ in range(3 * RESTARTS_PER_MINUTE):
        supervisor.procs["api"].returncode = 1  # type: ignore[attr-defined]
        assert supervisor.check() is None
        now[0] += 61
    assert sum(p.role == "api" for p in started) == 1 + 3 * RESTARTS_PER_MINUTE
