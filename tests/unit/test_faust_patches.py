"""The worker's corrections to Faust's commits (tables/faust_patches.py), on Faust's own bookkeeping
structures: a commit moves only through acknowledged offsets from the committed one."""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from typing import Any, NamedTuple

from faust.types import TP

from tables.faust_patches import ORIGINAL_NEW_OFFSET, STALL_SECONDS, AssignedAt, CommitGuard


class Held(NamedTuple):
    tp: Any
    offset: int


class FakeConsumer:
    """The attributes Faust's ``Consumer._new_offset`` reads."""

    def __init__(self, committed: int | None, acked: list[int]) -> None:
        self.tp = TP("t.actions.webhook", 3)
        self._committed_offset: defaultdict[Any, int | None] = defaultdict(lambda: None)
        self._committed_offset[self.tp] = committed
        self._acked: defaultdict[Any, list[int]] = defaultdict(list)
        self._acked[self.tp] = list(acked)
        self._acked_index: defaultdict[Any, set[int]] = defaultdict(set)
        self._acked_index[self.tp] = set(acked)
        self._gap: defaultdict[Any, Any] = defaultdict(lambda: None)
        self._unacked_messages: set[Any] = set()

    def assignment(self) -> set[Any]:
        return {self.tp}


def _guard(now: list[float]) -> CommitGuard:
    return CommitGuard(lambda topic: topic.startswith("t."), clock=lambda: now[0])


def test_faust_commits_past_a_missing_record_at_the_committed_offset() -> None:
    """The loss: record 100 (the committed offset, the next to read) never acknowledged, 101 and
    102 were; Faust's own rule commits 103."""
    consumer = FakeConsumer(committed=100, acked=[101, 102])
    assert ORIGINAL_NEW_OFFSET(consumer, consumer.tp) == 103


def test_the_guard_holds_the_commit_at_the_missing_record() -> None:
    now = [0.0]
    consumer = FakeConsumer(committed=100, acked=[101, 102])
    assert _guard(now).new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) is None
    assert consumer._acked[consumer.tp] == [101, 102], "nothing acknowledged is forgotten"


def test_the_guard_commits_a_run_from_the_committed_offset() -> None:
    consumer = FakeConsumer(committed=100, acked=[100, 101, 102, 105])
    assert _guard([0.0]).new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) == 103


def test_after_a_revoke_the_last_known_commit_still_guards() -> None:
    """Faust pops the committed offset at a revoke; acknowledgements arriving before the next seek
    must not commit past a record that was never acknowledged."""
    guard = _guard([0.0])
    consumer = FakeConsumer(committed=None, acked=[101, 102])
    guard.seeked({consumer.tp: 100})
    assert guard.new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) is None
    assert ORIGINAL_NEW_OFFSET(FakeConsumer(committed=None, acked=[101, 102]), consumer.tp) == 103


def test_acknowledgements_below_the_commit_are_dropped() -> None:
    consumer = FakeConsumer(committed=100, acked=[98, 99, 100, 101])
    assert _guard([0.0]).new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) == 102
    assert 98 not in consumer._acked_index[consumer.tp]


def test_a_commit_held_back_long_enough_fetches_the_records_again(monkeypatch: Any) -> None:
    import tables.faust_patches as patches

    sent: list[tuple[Any, int]] = []

    async def fake_seek_back(consumer: Any, tp: Any, offset: int) -> None:
        sent.append((tp, offset))

    def run_now(coro: Any) -> Any:
        with contextlib.suppress(StopIteration):
            coro.send(None)

        class Done:
            def add_done_callback(self, _fn: Any) -> None:
                return None

        return Done()

    monkeypatch.setattr(patches, "_seek_back", fake_seek_back)
    monkeypatch.setattr(patches.asyncio, "ensure_future", run_now)
    now = [0.0]
    guard = _guard(now)
    consumer = FakeConsumer(committed=100, acked=[101])
    assert guard.new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) is None
    now[0] = STALL_SECONDS / 2
    assert guard.new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) is None
    assert sent == []
    now[0] = STALL_SECONDS + 1
    assert guard.new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) is None
    assert sent == [(consumer.tp, 100)]
    now[0] = 3 * STALL_SECONDS
    guard.new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET)
    assert sent == [(consumer.tp, 100)], "one fetch back per stall"
    # the record comes again and is acknowledged: the commit moves on
    consumer._acked[consumer.tp].append(100)
    assert guard.new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) == 102
    assert guard.stalled == {}


def test_other_topics_keep_fausts_rule() -> None:
    consumer = FakeConsumer(committed=100, acked=[101, 102])
    consumer.tp = TP("other.compacted", 0)
    consumer._committed_offset[consumer.tp] = 100
    consumer._acked[consumer.tp] = [101, 102]
    assert _guard([0.0]).new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) == 103


def test_a_record_still_being_processed_is_not_fetched_again(monkeypatch: Any) -> None:
    """Several delivery actors acknowledge out of order, and a slow batch can take longer than the
    stall time: a record an agent holds is not missing (fetching it again would deliver it twice)."""
    import tables.faust_patches as patches

    sent: list[int] = []
    monkeypatch.setattr(patches.asyncio, "ensure_future", lambda coro: sent.append(1) or coro.close())
    now = [0.0]
    guard = _guard(now)
    consumer = FakeConsumer(committed=100, acked=[101])
    consumer._unacked_messages = {Held(consumer.tp, 100)}
    for step in range(5):
        now[0] = step * STALL_SECONDS
        assert guard.new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) is None
    assert sent == []


def test_a_partition_no_longer_assigned_is_left_to_its_new_owner(monkeypatch: Any) -> None:
    import tables.faust_patches as patches

    sent: list[int] = []
    monkeypatch.setattr(patches.asyncio, "ensure_future", lambda coro: sent.append(1) or coro.close())
    now = [0.0]
    guard = _guard(now)
    consumer = FakeConsumer(committed=100, acked=[101])
    consumer.assignment = lambda: set()  # type: ignore[method-assign]
    for step in range(3):
        now[0] = step * STALL_SECONDS
        assert guard.new_offset(consumer, consumer.tp, ORIGINAL_NEW_OFFSET) is None
    assert sent == [] and guard.stalled == {}


class FakeAiokafkaThread:
    """aiokafka's ``fetched_records`` as the consumer thread runs it: an empty set of partitions
    means every partition; records handed out have their positions moved past them. While it
    waits, Faust pauses the only active partition (the end of a changelog recovery)."""

    def __init__(self, consumer: Any, buffered: dict[Any, list[int]]) -> None:
        self.consumer = consumer
        self.buffered = buffered
        self.handed_out: dict[Any, list[int]] = {}

    async def getmany(self, active_partitions: Any, timeout: float) -> dict[Any, list[int]]:  # noqa: ASYNC109 - Faust's signature
        self.consumer.pause_partitions({CHANGELOG_TP})  # Faust empties its live active set meanwhile
        out = {tp: offsets for tp, offsets in self.buffered.items() if not active_partitions or tp in active_partitions}
        for tp in out:
            self.handed_out[tp] = self.buffered.pop(tp)
        return out


CHANGELOG_TP = TP("t.w.control-state-changelog", 0)
PUBLISH_TP = TP("t.publish", 0)


def _delegate_consumer() -> Any:
    """The attributes ``Consumer._wait_next_records`` reads, on Faust's own aiokafka consumer class."""
    from faust.transport.drivers.aiokafka import Consumer

    consumer: Any = object.__new__(Consumer)
    consumer.flow_active = True
    consumer.not_waiting_next_records = asyncio.Event()
    consumer.app = type("App", (), {"client_only": False})()
    consumer._active_partitions = {CHANGELOG_TP}
    consumer._paused_partitions = {PUBLISH_TP}
    return consumer


def test_a_pause_during_a_fetch_hands_out_no_record_of_a_partition_not_asked_for() -> None:
    from app.settings import Settings
    from tables.faust_patches import install

    install(Settings())
    consumer = _delegate_consumer()
    consumer._thread = thread = FakeAiokafkaThread(consumer, {PUBLISH_TP: [6, 7, 8], CHANGELOG_TP: [40]})
    records, active = asyncio.run(consumer._wait_next_records(1.0))
    # Faust's getmany yields a record only if its partition is in ``active``; any other record
    # handed out by aiokafka is lost (its position moved past it). Faust's own code handed
    # aiokafka the live set, emptied by the pause: the publish records 6..8 came out and were skipped.
    skipped = {tp: offsets for tp, offsets in thread.handed_out.items() if tp not in active}
    assert skipped == {}, f"records handed out and skipped by getmany: {skipped}"
    assert records == {CHANGELOG_TP: [40]}
    assert thread.buffered == {PUBLISH_TP: [6, 7, 8]}  # still in aiokafka's buffer, delivered once resumed


def test_stream_timeout_counts_from_a_partitions_assignment_not_the_workers_start() -> None:
    """3: a worker started at 0 (its consumer's ``time_started``) is assigned partitions at 10, and
    again at 100 (Faust forgot their last events at the rebalance): the check counts from 100."""
    now = [10.0]
    at = AssignedAt(clock=lambda: now[0])
    kept, taken, gone = TP("t.traces", 0), TP("t.traces", 1), TP("t.traces", 2)
    at.assigned({kept, gone})
    assert at.since(kept, 0.0) == 10.0
    now[0] = 100.0
    at.assigned({kept, taken})
    assert at.since(taken, 0.0) == 100.0
    assert at.since(kept, 0.0) == 100.0
    assert at.since(gone, 0.0) == 0.0  # not assigned: the worker's start, as Faust had it
    assert at.since(kept, 150.0) == 150.0  # never before the consumer's own start
