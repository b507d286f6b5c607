"""PartitionProgress: each record of a partition applied once and in offset order, whatever the
consumer delivers (redeliveries, a jump past records that never came, holes with no record)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from app import metrics
from streams.progress import MAX_SEEKS, RESEEK_AFTER_S, PartitionProgress
from tables.codecs import PROGRESS_KEY, load_progress


def _event(partition: int, offset: int) -> Any:
    return SimpleNamespace(message=SimpleNamespace(partition=partition, offset=offset))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _run(progress: PartitionProgress, offsets: list[tuple[int, int]], stored: dict[int, int | None]) -> list[str]:
    """One batch: the verdict per record (``stored``: the table's next offset per partition)."""
    out = []
    for partition, offset in offsets:
        verdict = progress.admit(_event(partition, offset), lambda p=partition: stored.get(p))  # type: ignore[misc]
        out.append(verdict.value)
    return out


def _sample(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def test_records_apply_in_order_and_redeliveries_are_skipped() -> None:
    progress = PartitionProgress("t-order")
    progress.start_batch(1)
    assert _run(progress, [(0, 10), (0, 11), (1, 3)], {0: 10, 1: None}) == ["apply", "apply", "apply"]
    assert {
        p: load_progress(v) for _e, k, v in progress.markers() if k == PROGRESS_KEY for p in [_e.message.partition]
    } == {
        0: 12,
        1: 4,
    }
    progress.batch_written()
    progress.start_batch(1)
    # a rebalance elsewhere redelivers from the committed offset: applied records are skipped
    assert _run(progress, [(0, 9), (0, 11), (0, 12)], {}) == ["skip", "skip", "apply"]


def test_a_new_generation_reads_the_stored_offset_again() -> None:
    progress = PartitionProgress("t-generation")
    progress.start_batch(1)
    _run(progress, [(0, 10), (0, 11)], {0: 10})
    progress.batch_written()
    progress.start_batch(2)  # the partition went to another worker and came back: the table knows best
    assert _run(progress, [(0, 12), (0, 20)], {0: 20}) == ["skip", "apply"]


def test_a_failed_attempt_leaves_no_progress_behind() -> None:
    """process_until_done runs a failed batch again: its records must apply again, not be skipped."""
    progress = PartitionProgress("t-retry")
    progress.start_batch(1)
    assert _run(progress, [(0, 5), (0, 6)], {0: 5}) == ["apply", "apply"]
    progress.start_batch(1)  # the attempt raised before its states were written
    assert _run(progress, [(0, 5), (0, 6)], {0: 5}) == ["apply", "apply"]


def test_a_jump_is_fetched_again_and_the_missing_records_apply_in_order(caplog: pytest.LogCaptureFixture) -> None:
    """The shape of the rebalance loss: after the records up to 783, the next to arrive is 873."""
    progress = PartitionProgress("t-jump")
    refetches = _sample("tocsin_offset_refetches_total", stage="t-jump")
    progress.start_batch(1)
    with caplog.at_level(logging.WARNING, logger="streams.progress"):
        assert _run(progress, [(2, 782), (2, 783), (2, 873), (2, 874)], {2: 782}) == ["apply", "apply", "drop", "drop"]
    assert progress.seeks_due() == {2: 784}
    assert progress.seeks_due() == {}, "one seek per hole"
    assert [m for _e, _k, m in progress.markers()] == [b"784"]  # the marker stays before the missing records
    progress.batch_written()
    assert _sample("tocsin_offset_refetches_total", stage="t-jump") - refetches == 1
    assert "records 784..872 did not reach the agent before 873" in caplog.text
    # records fetched before the seek still arrive first; then the seek's records from 784
    progress.start_batch(1)
    assert _run(progress, [(2, 875), (2, 876)], {}) == ["drop", "drop"]
    assert _run(progress, [(2, 784), (2, 785)], {}) == ["apply", "apply"]
    assert progress.holes == {}
    assert [m for _e, _k, m in progress.markers()] == [b"786"]


def test_a_hole_without_records_is_passed_after_the_seek_confirms_it() -> None:
    """Offsets with no record for a consumer (transaction markers, aborted records): the first
    record after the seek is the one that came instead."""
    progress = PartitionProgress("t-hole")
    holes = _sample("tocsin_offset_holes_total", stage="t-hole")
    progress.start_batch(1)
    assert _run(progress, [(0, 10), (0, 12)], {0: 10}) == ["apply", "drop"]
    assert progress.seeks_due() == {0: 11}
    progress.batch_written()
    progress.start_batch(1)
    assert _run(progress, [(0, 13), (0, 12), (0, 13)], {}) == ["drop", "apply", "apply"]
    assert _sample("tocsin_offset_holes_total", stage="t-hole") - holes == 1


def test_records_that_never_come_back_are_given_up_as_lost_after_bounded_seeks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    progress = PartitionProgress("t-lost", clock=clock)
    lost = _sample("tocsin_record_gaps_total", stage="t-lost", partition="0")
    progress.start_batch(1)
    assert _run(progress, [(0, 100)], {0: 50}) == ["drop"]
    with caplog.at_level(logging.ERROR, logger="streams.progress"):
        for attempt in range(1, MAX_SEEKS + 1):
            assert progress.seeks_due() == {0: 50}, f"seek {attempt}"
            clock.now += RESEEK_AFTER_S + 1
            # only records past the hole keep coming: the seek brings nothing from 50
            verdict = _run(progress, [(0, 100 + attempt)], {})
            assert verdict == (["apply"] if attempt == MAX_SEEKS else ["drop"]), attempt
            assert ("are lost" in caplog.text) == (attempt == MAX_SEEKS)
    assert progress.seeks_due() == {}
    assert _sample("tocsin_record_gaps_total", stage="t-lost", partition="0") - lost == 100 + MAX_SEEKS - 50
    assert f"records 50..{100 + MAX_SEEKS - 1} are lost: {MAX_SEEKS} seeks back to 50" in caplog.text
