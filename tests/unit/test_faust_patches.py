"""The worker's corrections to Faust's commits (tables/commit_guard.py, tables/faust_patches.py), on Faust's own
bookkeeping structures: a commit moves only through acknowledged offsets from the committed one."""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from typing import Any, NamedTuple

from faust.types import TP

from tables.commit_guard import ORIGINAL_NEW_OFFSET, STALL_SECONDS, CommitGuard
from tables.faust_patches import AssignedAt


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
    import tables.commit_guard as patches

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
    import tables.commit_guard as patches

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
    import tables.commit_guard as patches

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


class RecoveryLike:
    """What ``_resume_streams_last`` reads of Faust's ``Recovery``: its app and the app's consumer."""

    def __init__(self, rebalancing_after: bool, log: list[str]) -> None:
        self.log = log
        consumer = type("Consumer", (), {"resume_partitions": lambda _self, tps: log.append(f"resume {sorted(tps)}")})()
        self.app = type("App", (), {"consumer": consumer, "rebalancing": True})()
        self.rebalancing_after = rebalancing_after

    async def resume_streams(self) -> None:
        self.app.consumer.resume_partitions({2, 1})  # deferred by the patch until the end
        self.log.append("seek to committed")
        self.app.rebalancing = self.rebalancing_after  # Faust's on_rebalance_end, when it ends


def test_after_rebalance_work_runs_before_the_stream_partitions_resume(monkeypatch: Any) -> None:
    import tables.faust_patches as patches

    log: list[str] = []

    async def align() -> None:
        log.append("align")

    monkeypatch.setattr(patches, "_after_rebalance", [align])
    resume = patches._resume_streams_last(RecoveryLike.resume_streams)
    asyncio.run(resume(RecoveryLike(rebalancing_after=False, log=log)))
    assert log == ["seek to committed", "align", "resume [1, 2]"]
    log.clear()  # overtaken by another rebalance: its partitions are not this one's to align
    asyncio.run(resume(RecoveryLike(rebalancing_after=True, log=log)))
    assert log == ["seek to committed", "resume [1, 2]"]


async def test_partitions_committed_past_their_stored_progress_are_fetched_again(monkeypatch: Any) -> None:
    """keep_aligned: after a rebalance, a partition whose committed offset is past the next offset the
    table stores (records acknowledged while held back) is sent back to it; commit markers owed
    (``next + owed``) are no gap."""
    from types import SimpleNamespace

    import tables.faust_adapter as adapter

    name = "t.publish"
    stored = {0: (10, 0), 1: (10, 2), 2: (12, 0), 3: None, 4: (3, 0)}
    committed = {TP(name, 0): 15, TP(name, 1): 12, TP(name, 2): 12, TP(name, 3): 9, TP(name, 4): None}
    actives = {*committed, TP("t.other", 0)}
    monkeypatch.setattr(adapter, "app", SimpleNamespace(assignor=SimpleNamespace(assigned_actives=lambda: actives)))
    monkeypatch.setattr(adapter, "_faust", SimpleNamespace(consumer=SimpleNamespace(_committed_offset=committed)))
    sought: list[tuple[int, int]] = []

    async def seek_back(source: Any, partition: int, offset: int) -> bool:
        sought.append((partition, offset))
        return True

    consumer = adapter.FaustConsumer()
    monkeypatch.setattr(consumer, "seek_back", seek_back)
    table = SimpleNamespace(progress_of=lambda partition: stored[partition])
    await consumer._align(SimpleNamespace(get_topic_name=lambda: name), table, "control")  # type: ignore[arg-type]
    assert sought == [(0, 10)]


async def test_a_recovery_starts_once_the_batches_in_flight_stored_their_states() -> None:
    """7: the assignment's table work waits for the batches running; the batches after it see the
    recovery under way (and hold their records back) until it ends."""
    from tables.faust_patches import Quiet, wait_for_batches

    quiet, log = Quiet(), []

    async def on_rebalance(_self: Any) -> None:
        log.append("recovery starts")

    async def batch(name: str, release: asyncio.Event) -> None:
        async with quiet.batch():
            log.append(f"{name} starts, recovering={quiet.recovering}")
            await release.wait()
            log.append(f"{name} stored")

    first, second = asyncio.Event(), asyncio.Event()
    running = [asyncio.create_task(batch("a", first)), asyncio.create_task(batch("b", second))]
    await asyncio.sleep(0)
    rebalance = asyncio.create_task(wait_for_batches(on_rebalance, quiet)(None))
    await asyncio.sleep(0)
    assert quiet.recovering and not rebalance.done()
    first.set()
    await asyncio.sleep(0.01)
    assert not rebalance.done()  # b still runs
    second.set()
    await asyncio.wait_for(rebalance, 1)
    await asyncio.gather(*running)
    await batch("c", first)
    assert log == [
        "a starts, recovering=False",
        "b starts, recovering=False",
        "a stored",
        "b stored",
        "recovery starts",
        "c starts, recovering=True",
        "c stored",
    ]
