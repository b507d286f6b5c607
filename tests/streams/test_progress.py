"""PartitionProgress: each record of a partition applied once and in offset order, whatever the
consumer delivers (redeliveries, a jump past records that never came, holes with no record)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from app.observability import metrics
from streams.progress import MAX_SEEKS, RESEEK_AFTER_S, PartitionProgress, applicable
from tables.codecs import PROGRESS_KEY, dump_progress, load_progress, load_progress_state
from tables.offset_ranges import OffsetRanges


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
    # 13 was fetched before the seek; 12 comes first after it: sought once more to be sure
    assert _run(progress, [(0, 13), (0, 12), (0, 13)], {}) == ["drop", "drop", "drop"]
    assert progress.seeks_due() == {0: 11}
    progress.batch_written()
    progress.start_batch(1)
    assert _run(progress, [(0, 12), (0, 13)], {}) == ["apply", "apply"]  # 12 first again: 11 holds none
    assert _sample("tocsin_offset_holes_total", stage="t-hole") - holes == 1


def test_records_fetched_again_but_dropped_by_faust_are_sought_once_more() -> None:
    """What test_scaling caught: after a seek back to 525 the first record to come was 527 (Faust's
    read offset had been moved past 525 and 526 by records fetched before the seek, and it dropped
    them as read). Taken for a hole, 525 and 526 were passed and never decided."""
    progress = PartitionProgress("t-hole-race")
    holes = _sample("tocsin_offset_holes_total", stage="t-hole-race")
    progress.start_batch(1)
    assert _run(progress, [(0, 537)], {0: 525}) == ["drop"]
    assert progress.seeks_due() == {0: 525}
    progress.batch_written()
    progress.start_batch(1)
    assert _run(progress, [(0, 527), (0, 528)], {}) == ["drop", "drop"]
    assert progress.seeks_due() == {0: 525}
    progress.batch_written()
    progress.start_batch(1)
    assert _run(progress, [(0, 525), (0, 526), (0, 527)], {}) == ["apply", "apply", "apply"]
    assert _sample("tocsin_offset_holes_total", stage="t-hole-race") == holes


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


# Transactions: a committed transaction leaves a commit marker in each partition it wrote, an aborted
# one its records and an abort marker; a read_committed consumer gets none of them, and the fetcher
# notes the offsets it passed over (tables/offset_ranges.py). The API stamps each record with
# ``tx = {index}/{count}``; the agents no longer read it.


def _tx(partition: int, offset: int, index: int, count: int) -> Any:
    headers = [("tx", f"{index}/{count}".encode())]
    return SimpleNamespace(message=SimpleNamespace(partition=partition, offset=offset, headers=headers))


def _admit(progress: PartitionProgress, events: list[Any], stored: dict[int, int | None]) -> list[str]:
    return [progress.admit(e, lambda p=e.message.partition: stored.get(p)).value for e in events]  # type: ignore[misc]


def _skipping(stage: str, ranges: OffsetRanges, clock: Clock | None = None) -> PartitionProgress:
    return PartitionProgress(stage, ranges.covers, **({"clock": clock} if clock else {}))


def test_offsets_the_fetcher_skipped_are_passed_without_a_seek() -> None:
    ranges = OffsetRanges()
    progress = _skipping("t-markers", ranges)
    progress.start_batch(1)
    passed = _sample("tocsin_offset_markers_total", stage="t-markers")
    refetches = _sample("tocsin_offset_refetches_total", stage="t-markers")
    # A: 10, 11 (marker 12); B: 13 (marker 14); C: 15, 16 with D's 17 between (two producers), then
    # markers 18 (C) and 19 (D); E at 20 (marker 21); a record of no transaction at 22
    for marker in (12, 14, 18, 19, 21):
        ranges.add(0, marker, marker + 1)
    events = [
        _tx(0, 10, 0, 2),
        _tx(0, 11, 1, 2),
        _tx(0, 13, 0, 1),
        _tx(0, 15, 0, 2),
        _tx(0, 16, 1, 2),
        _tx(0, 17, 0, 1),
        _tx(0, 20, 0, 1),
        _event(0, 22),
    ]
    assert _admit(progress, events, {0: 10}) == ["apply"] * 8
    assert progress.seeks_due() == {}
    assert progress.next[0] == 23
    assert _sample("tocsin_offset_markers_total", stage="t-markers") == passed + 5
    assert _sample("tocsin_offset_refetches_total", stage="t-markers") == refetches


def test_a_jump_the_fetcher_did_not_pass_over_is_fetched_again() -> None:
    """A record lost to the agent, or markers of a fetch another worker made: fetched again, and
    what the fetcher passes over then is known."""
    ranges = OffsetRanges()
    progress = _skipping("t-markers-more", ranges, Clock())
    progress.start_batch(1)
    assert _admit(progress, [_tx(0, 10, 0, 1), _tx(0, 13, 0, 1)], {0: 10}) == ["apply", "drop"]
    assert progress.seeks_due() == {0: 11}
    progress.batch_written()
    progress.start_batch(1)
    ranges.add(0, 11, 12)  # the fetch from 11 passed over the marker at 11, then brought 12 and 13
    assert _admit(progress, [_event(0, 12), _tx(0, 13, 0, 1)], {}) == ["apply", "apply"]
    assert progress.next[0] == 14 and not progress.holes


def test_an_aborted_transaction_passed_over_by_the_fetch_again_ends_the_hole() -> None:
    ranges = OffsetRanges()
    progress = _skipping("t-markers-abort", ranges, Clock())
    progress.start_batch(1)
    # 10 committed (marker 11), aborted records 12-13 and their marker 14, then 15
    assert _admit(progress, [_tx(0, 10, 0, 1), _tx(0, 15, 0, 1)], {0: 10}) == ["apply", "drop"]
    assert progress.seeks_due() == {0: 11}
    progress.batch_written()
    progress.start_batch(1)
    ranges.add(0, 11, 15)  # the fetch again passed over 11..14
    assert _admit(progress, [_tx(0, 15, 0, 1)], {}) == ["apply"]
    assert progress.seeks_due() == {} and not progress.holes


def test_a_stored_count_of_markers_owed_is_no_longer_trusted() -> None:
    """Values written by the counting rule (``offset/owed``) are read for their offset only."""
    progress = _skipping("t-markers-stored", OffsetRanges(), Clock())
    progress.start_batch(1)
    assert _admit(progress, [_event(0, 15)], {0: (14, 1)}) == ["drop"]  # type: ignore[dict-item]
    assert progress.seeks_due() == {0: 14}
    (stored,) = [v for _e, k, v in _written(progress, [_event(0, 14)]) if k == PROGRESS_KEY]
    assert load_progress_state(stored) == (15, 0), "no count of markers is written any more"


def _written(progress: PartitionProgress, events: list[Any]) -> list[tuple[Any, bytes, bytes]]:
    progress.batch_written()
    progress.start_batch(1)
    assert _admit(progress, events, {}) == ["apply"] * len(events)
    return progress.markers()


def test_the_progress_value_keeps_its_old_form_without_markers() -> None:
    assert dump_progress(12) == b"12" and load_progress(b"12") == 12 and load_progress_state(b"12") == (12, 0)
    assert dump_progress(12, 3) == b"12/3" and load_progress(b"12/3") == 12 and load_progress_state(b"12/3") == (12, 3)
    assert load_progress_state(None) is None


def test_records_fetched_before_the_seek_send_the_consumer_back_again() -> None:
    """After the seek, Faust still delivers what it had fetched before (past ``seen``), and its read
    offset moves past the seek target with them, so it would drop the records fetched again: each
    batch with such records seeks again (not counted as another try)."""
    clock = Clock()
    progress = PartitionProgress("t-stale", clock=clock)
    progress.start_batch(1)
    assert _run(progress, [(0, 10), (0, 13), (0, 14)], {0: 10}) == ["apply", "drop", "drop"]
    assert progress.seeks_due() == {0: 11}
    assert progress.seeks_due() == {}, "asked once"
    progress.batch_written()
    progress.start_batch(1)
    assert _run(progress, [(0, 15), (0, 16)], {}) == ["drop", "drop"]  # fetched before the seek
    assert progress.seeks_due() == {0: 11}, "the same seek again"
    assert progress.holes[0].seeks == 1
    progress.batch_written()
    progress.start_batch(1)
    assert _run(progress, [(0, 11), (0, 12), (0, 13)], {}) == ["apply", "apply", "apply"]
    assert progress.seeks_due() == {} and not progress.holes


class Consumer:
    """The worker's consumer as :func:`applicable` asks it."""

    def __init__(self, recovering: bool, active: set[int]) -> None:
        self._recovering, self.active = recovering, frozenset(active)

    def recovering(self) -> bool:
        return self._recovering

    def active_partitions(self, source: Any) -> frozenset[int]:
        assert source == "publish"
        return self.active


def test_nothing_is_applied_while_the_tables_recover(caplog: pytest.LogCaptureFixture) -> None:
    """A batch handed over while Faust recovers the tables is held back (and fetched again after
    it): test_scaling saw one decided from a state four records old, mid-recovery."""
    events = [_event(0, 5), _event(1, 7)]
    before = _sample("tocsin_held_back_records_total", stage="t-held")
    with caplog.at_level(logging.INFO, logger="streams.progress"):
        assert applicable("t-held", events, "publish", Consumer(recovering=True, active={0, 1})) == []
    assert _sample("tocsin_held_back_records_total", stage="t-held") == before + 2
    assert "2 records held back: the tables are recovering" in caplog.text
    assert applicable("t-held", events, "publish", Consumer(recovering=False, active={0, 1})) == events


def test_records_of_a_partition_another_worker_holds_are_not_applied(caplog: pytest.LogCaptureFixture) -> None:
    events = [_event(0, 5), _event(3, 1), _event(0, 6), _event(4, 2)]
    with caplog.at_level(logging.INFO, logger="streams.progress"):
        kept = applicable("t-gone", events, "publish", Consumer(recovering=False, active={0, 4}))
    assert kept == [events[0], events[2], events[3]]
    assert "1 records of partitions [3] left" in caplog.text


def test_a_lost_record_before_a_late_commit_marker_is_fetched_again() -> None:
    """A transaction's commit marker need not follow its last record: a record of another producer (a
    publish written without a transaction, another lane's transaction) may come between them. A
    jump over a record that did not reach the agent is never taken for a marker nobody saw."""
    progress = PartitionProgress("t-late-marker", clock=Clock())
    progress.start_batch(1)
    # 10 closes transaction A; 11 (a publish of no transaction) does not reach the agent; 12 does;
    # A's commit marker is at 13, after them
    assert _admit(progress, [_tx(0, 10, 0, 1), _event(0, 12)], {0: 10}) == ["apply", "drop"]
    assert progress.seeks_due() == {0: 11}
