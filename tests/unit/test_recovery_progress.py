"""The worker's table recovery progress (tables/faust_adapter.py: RecoveryWatch), on the structures
Faust's Recovery service keeps (highwater and offset per active changelog partition, the last
offset each, -1 for none), reported as faust_patches.observe_recovery reports them."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

import pytest
from faust.types import TP

from app.observability.health import RecoveryProgress
from tables.faust_adapter import RecoveryWatch

A, B, C = TP("t.w.control-state-changelog", 0), TP("t.w.control-state-changelog", 1), TP("t.w.idempotency", 0)


class FakeRecovery:
    def __init__(self, highwaters: dict[Any, int], offsets: dict[Any, int]) -> None:
        self.active_tps = set(highwaters)
        self.active_highwaters: Counter[Any] = Counter(highwaters)
        self.active_offsets: Counter[Any] = Counter(offsets)


def test_records_and_partitions_done_of_the_total_and_the_time_left(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]

    async def scenario() -> list[RecoveryProgress | None]:
        watch = RecoveryWatch(log_seconds=0.01, clock=lambda: now[0])
        # A: read 0..999 from nothing; B: local store at 499, changelog to 799; C: nothing to read
        recovery = FakeRecovery({A: 999, B: 799, C: -1}, {A: -1, B: 499, C: -1})
        seen = []
        watch.started(recovery)
        seen.append(watch.progress())  # start offsets not known yet
        watch.seeked(recovery)
        watch.started(recovery)  # Faust's second mark of the same recovery keeps the start
        now[0] += 4.0
        recovery.active_offsets[A] = 499
        recovery.active_offsets[B] = 799
        seen.append(watch.progress())
        await asyncio.sleep(0.05)  # the periodic line runs on the loop
        now[0] += 4.0
        recovery.active_offsets[A] = 999
        watch.ended(recovery)
        seen.append(watch.progress())
        now[0] += 60.0
        seen.append(watch.progress())  # the last recovery's figures stay as they ended
        # a new recovery (a rebalance) starts afresh
        watch.started(recovery)
        seen.append(watch.progress())
        return seen

    with caplog.at_level(logging.INFO, logger="tables.faust_adapter"):
        before, middle, done, later, fresh = asyncio.run(scenario())
    assert before is None and fresh is None
    assert middle == RecoveryProgress(
        records_done=800, records_total=1300, partitions_done=2, partitions_total=3, seconds=4.0, done=False
    )
    assert middle.remaining_seconds == pytest.approx(500 * 4.0 / 800)
    assert middle.as_json()["remaining_seconds"] == 2.5
    assert done == later == RecoveryProgress(1300, 1300, 3, 3, 8.0, True)
    assert done is not None and done.as_json()["state"] == "done" and done.remaining_seconds == 0.0
    lines = [r.getMessage() for r in caplog.records]
    assert any("800 of 1,300 records, 2 of 3 partitions done" in line and "about 2 s" in line for line in lines)
    assert lines[-1] == "tables: recovered 1,300 changelog records in 3 partitions in 8.0 s (162 records/s)"


def test_no_estimate_before_a_record_and_no_final_line_when_nothing_was_read(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> tuple[RecoveryProgress | None, RecoveryProgress | None]:
        watch = RecoveryWatch(log_seconds=60, clock=lambda: 5.0)
        behind = FakeRecovery({A: 9}, {A: -1})
        watch.started(behind)
        watch.seeked(behind)
        first = watch.progress()
        behind.active_offsets[A] = 9
        watch.ended(behind)
        up_to_date = FakeRecovery({A: 9}, {A: 9})
        watch.started(up_to_date)
        watch.seeked(up_to_date)
        watch.ended(up_to_date)
        return first, watch.progress()

    with caplog.at_level(logging.INFO, logger="tables.faust_adapter"):
        first, nothing = asyncio.run(scenario())
    assert first is not None and first.remaining_seconds is None and first.as_json()["remaining_seconds"] is None
    assert "time left unknown yet" in first.describe()
    assert nothing == RecoveryProgress(0, 0, 1, 1, 0.0, True)
    assert [r.getMessage() for r in caplog.records if "recovered" in r.getMessage()] == [
        "tables: recovered 10 changelog records in 1 partitions in 0.0 s (0 records/s)"
    ]
