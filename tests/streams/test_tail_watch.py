"""The tail watch (streams/tail_watch.py), the retry scheduler's alarm: a partition behind its last
stable offset with nothing in flight is fetched again, reported, and fails readiness if stuck."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import pytest

from app.observability import metrics
from streams.tail_watch import TailWatch, Watched


class Skipped:
    """The offsets a fetcher passed over without a record, by partition."""

    def __init__(self) -> None:
        self.offsets: set[tuple[tuple[str, int], int]] = set()

    def add(self, key: tuple[str, int], start: int, end: int) -> None:
        self.offsets |= {(key, o) for o in range(start, end)}

    def covers(self, key: tuple[str, int], start: int, end: int) -> bool:
        return all((key, o) in self.offsets for o in range(start, end))


class View:
    """A consumer as the watch sees it: the test moves its offsets."""

    def __init__(self) -> None:
        self.ends: dict[tuple[str, int], int] = {}
        self.held_partitions: dict[str, list[int]] = {}
        self.flying: set[tuple[str, int]] = set()
        self.skipped = Skipped()
        self.seeks: list[tuple[str, int, int]] = []
        self.rebalancing = False
        self.gen = 1

    def generation(self) -> int:
        return self.gen

    def recovering(self) -> bool:
        return self.rebalancing

    def held(self, topic: str) -> Sequence[int]:
        return self.held_partitions.get(topic, [])

    async def stable_ends(self, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
        return {tp: self.ends[tp] for tp in tps if tp in self.ends}

    def in_flight(self, topic: str, partition: int) -> bool:
        return (topic, partition) in self.flying

    def non_records(self, topic: str, partition: int, start: int, end: int) -> bool:
        return self.skipped.covers((topic, partition), start, end)

    def describe(self, topic: str, partition: int) -> str:
        return "read 41"

    async def seek(self, topic: str, partition: int, offset: int) -> bool:
        self.seeks.append((topic, partition, offset))
        return partition in self.held_partitions.get(topic, [])


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _watch(view: View, applied: dict[int, int | None], clock: Clock) -> TailWatch:
    async def read(partition: int) -> int | None:
        return applied.get(partition)

    return TailWatch(view, [Watched("t-tail", "publish", read)], grace_s=3.0, retries=2, clock=clock)


def _sample(outcome: str) -> float:
    labels = {"stage": "t-tail", "outcome": outcome}
    return metrics.REGISTRY.get_sample_value("tocsin_tail_refetches_total", labels) or 0


def _run(watch: TailWatch, clock: Clock, seconds: float) -> None:
    for _ in range(int(seconds)):
        clock.now += 1
        asyncio.run(watch.check())


def test_a_quiet_partition_behind_its_end_is_fetched_again_and_its_late_records_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    view, clock = View(), Clock()
    view.held_partitions = {"publish": [0, 1]}
    view.ends = {("publish", 0): 42, ("publish", 1): 7}
    applied: dict[int, int | None] = {0: 40, 1: 7}
    watch = _watch(view, applied, clock)
    recovered = _sample("recovered")
    _run(watch, clock, 3)
    assert view.seeks == [], "not before the grace period"
    _run(watch, clock, 1)
    assert view.seeks == [("publish", 0, 40)], "partition 1 is at its end"
    applied[0] = 42  # the records came and were applied
    with caplog.at_level(logging.WARNING, logger="streams.tail_watch"):
        _run(watch, clock, 1)
    assert _sample("recovered") == recovered + 1
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "publish[0]: records 40..41 were applied only after the watch fetched them again" in line
    assert "read 41" in line, "with what the consumer held when it was found"
    assert watch.problems() == []


def test_records_in_flight_or_an_applied_offset_moving_are_not_behind() -> None:
    view, clock = View(), Clock()
    view.held_partitions = {"publish": [0]}
    view.ends = {("publish", 0): 50}
    applied: dict[int, int | None] = {0: 40}
    watch = _watch(view, applied, clock)
    view.flying.add(("publish", 0))
    _run(watch, clock, 6)
    assert view.seeks == [], "a record handed to the agent is being applied"
    view.flying.clear()
    for offset in (41, 42, 43, 44, 45):  # applied moves every second
        applied[0] = offset
        _run(watch, clock, 1)
    assert view.seeks == []
    view.rebalancing = True
    _run(watch, clock, 10)
    assert view.seeks == [], "nothing while a rebalance or a recovery is under way"


def test_offsets_the_fetcher_passed_over_are_no_hole(caplog: pytest.LogCaptureFixture) -> None:
    view, clock = View(), Clock()
    view.held_partitions = {"publish": [0]}
    view.ends = {("publish", 0): 12}
    applied: dict[int, int | None] = {0: 10}
    watch = _watch(view, applied, clock)
    view.skipped.add(("publish", 0), 10, 11)
    _run(watch, clock, 5)
    assert view.seeks == [("publish", 0, 10)], "11 is not known to hold no record"
    empty = _sample("empty")
    view.skipped.add(("publish", 0), 11, 12)  # the fetch again passed over an aborted record
    with caplog.at_level(logging.INFO, logger="streams.tail_watch"):
        _run(watch, clock, 1)
    assert _sample("empty") == empty + 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    _run(watch, clock, 10)
    assert view.seeks == [("publish", 0, 10)]


def test_a_partition_that_cannot_catch_up_fails_readiness_with_an_error_until_it_does(
    caplog: pytest.LogCaptureFixture,
) -> None:
    view, clock = View(), Clock()
    view.held_partitions = {"publish": [3]}
    view.ends = {("publish", 3): 9}
    applied: dict[int, int | None] = {3: 5}
    watch = _watch(view, applied, clock)
    with caplog.at_level(logging.ERROR, logger="streams.tail_watch"):
        _run(watch, clock, 12)
    assert len(view.seeks) == 3, "two tries, then the ERROR and one more"
    assert watch.problems() == ["t-tail publish[3] applied 5 < 9"]
    (error,) = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert "still behind the last stable offset 9 after 2 fetches again" in error
    assert metrics.REGISTRY.get_sample_value("tocsin_tail_stuck_partitions", {"stage": "t-tail"}) == 1
    _run(watch, clock, 5)
    assert len(view.seeks) == 3, "once stuck, fetched again more slowly"
    applied[3] = 9
    _run(watch, clock, 1)
    assert watch.problems() == []
    assert metrics.REGISTRY.get_sample_value("tocsin_tail_stuck_partitions", {"stage": "t-tail"}) == 0


def test_a_partition_that_moved_to_another_worker_is_forgotten() -> None:
    view, clock = View(), Clock()
    view.held_partitions = {"publish": [3]}
    view.ends = {("publish", 3): 9}
    applied: dict[int, int | None] = {3: 5}
    watch = _watch(view, applied, clock)
    _run(watch, clock, 12)
    assert watch.problems()
    view.held_partitions = {"publish": []}
    view.gen = 2
    _run(watch, clock, 1)
    assert watch.problems() == [] and watch.behind == {}


def test_a_partition_never_applied_is_not_watched_until_its_offset_is_known() -> None:
    view, clock = View(), Clock()
    view.held_partitions = {"publish": [0]}
    view.ends = {("publish", 0): 9}
    watch = _watch(view, {0: None}, clock)
    _run(watch, clock, 10)
    assert view.seeks == []
