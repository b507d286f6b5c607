"""The one adapter between the agents and Faust (with :mod:`tables.faust_patches`, the only code
that touches Faust's and aiokafka's internals): :class:`FaustTable` implements
:class:`tables.state.PartitionState` on a Faust table, :class:`FaustConsumer` implements
:class:`tables.state.SourceConsumer` and the operations endpoints' reads of the consumer.
Importing this module installs the patches (the worker imports it before it starts).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import rocksdict
from aiokafka.errors import IllegalStateError
from faust.streams import _current_event
from faust.types import TP

from app.kafka.app import app, settings
from app.observability.health import RecoveryProgress
from tables import aiokafka_patches, faust_patches, rocksdb_memory
from tables.changelog_send import send_changelog
from tables.codecs import PROGRESS_KEY, load_progress_state
from tables.state import PartitionState

faust_patches.install(settings)
rocksdb_memory.install(settings)
_faust: Any = app  # Faust's internals used below are not in its type stubs
log = logging.getLogger(__name__)


class FaustTable:
    """A Faust table whose values are raw bytes (:mod:`tables.codecs` encodes them)."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def get(self, key: bytes) -> bytes | None:
        """The store read under ``table.get(key)`` without its serializer and sensor layers."""
        value: bytes | None = self.table.data._get(key)
        return value

    async def write(self, items: Sequence[tuple[Any, bytes, bytes]]) -> None:
        """Write ``(event, key, value)`` items: the changelog records of each partition as one
        producer batch, awaited until the broker has them, then the local RocksDB partition with the
        persisted changelog offset (one atomic write) — what ``table[key] = value`` does, but one Kafka send per
        partition and batch instead of one per key.

        The changelog goes first so that RocksDB never holds a state the changelog lacks. Written the
        other way round, a worker killed between the two kept a newer state locally than in the
        changelog; it went on from the newer one, but a worker that later rebuilt the table from the
        changelog (a lost disk, or the partition moving to another worker) got the older state back
        while the records in between were committed: decisions from a stale state. Now a kill before
        the local write leaves RocksDB behind, and recovery replays the missing records from the
        changelog (from the persisted offset, which is only moved after the local write).

        ``table[key] = value`` queues each changelog record as a FutureMessage through Faust's
        producer buffer (about the cost of a whole ``send`` per key: a third of the control agent's
        time). Here the records go into an aiokafka ``BatchBuilder`` and out with ``send_batch``; the
        call returns only once every record is stored, so the caller acknowledges its events (and
        Faust commits their offsets) only after their states are in the changelog. The persisted
        offset kept in RocksDB is the one Faust's own callback would keep, so a restart replays only
        the changelog's tail.
        """
        if not items:
            return
        store = self.table.data
        changelog = self.table.changelog_topic.get_topic_name()
        producer = _faust.producer._ensure_producer()  # the transport's AIOKafkaProducer, started with the app
        by_partition: dict[int, list[tuple[Any, bytes, bytes]]] = defaultdict(list)
        for item in items:
            by_partition[item[0].message.partition].append(item)
        local: dict[int, Any] = {}
        for partition, group in by_partition.items():
            local[partition] = writes = rocksdict.WriteBatch(raw_mode=True)  # as Faust's own changelog recovery writes
            for _event, key, value in group:
                writes.put(key, value)
        pairs = {partition: [(key, value) for _e, key, value in group] for partition, group in by_partition.items()}
        last = await send_changelog(producer, changelog, pairs)
        for partition, writes in local.items():
            # the states and the persisted offset in one RocksDB write (what set_persisted_offset stores)
            writes.put(store.offset_key, str(last[partition]).encode())
            store._db_for_partition(partition).write(writes)

    def delete(self, key: bytes) -> None:
        del self.table[key]

    def items(self) -> Iterable[tuple[bytes, bytes]]:
        return self.table.items()  # type: ignore[no-any-return]

    def progress(self) -> tuple[int, int] | None:
        return load_progress_state(self.get(PROGRESS_KEY))

    def progress_of(self, partition: int) -> tuple[int, int] | None:
        raw: bytes | None = self.table.data._db_for_partition(partition).get(PROGRESS_KEY)
        return load_progress_state(raw)


class FaustConsumer:
    """The worker's Faust consumer."""

    def use_event(self, event: Any) -> None:
        """Make ``event`` the current event of this task, for the table reads and writes that follow
        (Faust picks the RocksDB and changelog partition from it).

        Only the task's context variable is set, never ``Stream.current_event``: during a
        ``take_events`` batch the stream's background reader has already set that attribute to the
        next message and reads it back once the batch is done; overwriting it there made the next
        batch hold a stale event in place of a new one (seen as a record skipped and one lost).
        """
        _current_event.set(weakref.ref(event))

    def generation(self) -> int:
        """Faust counts the rebalances as they start."""
        count: int = app.rebalancing_count
        return count

    def active_partitions(self, source: Any) -> frozenset[int]:
        name = source.get_topic_name()
        return frozenset(tp.partition for tp in app.assignor.assigned_actives() if tp.topic == name)

    def recovering(self) -> bool:
        """From a rebalance's assignment to the end of its tables' recovery (faust_patches 7)."""
        return faust_patches.quiet.recovering

    def applying(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Around each batch that reads and writes the tables: a recovery waits for it."""
        return faust_patches.quiet.batch()

    def keep_aligned(self, source: Any, table: PartitionState, stage: str) -> None:
        """After every rebalance, send each partition of ``source`` (a topic) this worker holds back to
        the next offset ``table`` stores for it, when its committed offset is past it: records
        acknowledged without being applied (held back during the rebalance, streams/progress.py), which
        would otherwise wait for a later record of the partition to show the hole."""
        faust_patches.after_rebalance(functools.partial(self._align, source, table, stage))

    async def _align(self, source: Any, table: PartitionState, stage: str) -> None:
        name = source.get_topic_name()
        committed_offsets = _faust.consumer._committed_offset
        for partition in sorted(self.active_partitions(source)):
            tp = TP(name, partition)
            stored = table.progress_of(partition)
            committed = committed_offsets.get(tp)
            if stored is None or committed is None or stored[0] + stored[1] >= committed:
                continue  # applied up to the committed offset (or commit markers owed in between)
            log.info(
                "%s: partition %d: records %d..%d acknowledged but not applied; fetching them again",
                stage,
                partition,
                stored[0],
                committed - 1,
            )
            if not await self.seek_back(source, partition, stored[0]):
                log.info("%s: partition %d left this worker before the fetch back", stage, partition)

    async def seek_back(self, source: Any, partition: int, offset: int) -> bool:
        """Send the consumer of ``source`` (a topic) on ``partition`` back to ``offset``; False if the
        partition is no longer assigned to this worker. Faust's ``seek_wait`` runs aiokafka's seek in
        the consumer's thread and moves Faust's read offset with it, so the records from ``offset``
        are delivered again instead of dropped as already read."""
        return await _seek_wait(TP(source.get_topic_name(), partition), offset)

    def non_records_of(self, source: Any) -> Callable[[int, int, int], bool]:
        name = source.get_topic_name()
        return lambda partition, start, end: aiokafka_patches.non_records.covers((name, partition), start, end)

    def lag(self) -> Iterable[tuple[Any, int]]:
        """``(tp, records not read yet)`` per assigned partition of the topics the agents consume:
        high watermark minus next read. Not the tables' changelogs: the consumer holds their
        partitions too (its own, read only while recovering, which /readyz reports; and standbys',
        whose read offset is not the agents'), and counting them showed thousands of records
        "behind" on an idle, drained deployment of two workers."""
        consumer = _faust.consumer
        changelogs = _faust.tables.changelog_topics
        for tp in consumer.assignment():
            if tp.topic in changelogs:
                continue
            try:
                highwater = consumer.highwater(tp)
            except Exception:  # noqa: BLE001 - a partition revoked meanwhile has no watermark
                continue
            if highwater is None:
                continue
            read = consumer._read_offset.get(tp)  # the last offset handed to an agent, None before the first
            yield tp, max(highwater - (read + 1 if read is not None else 0), 0)

    def broker_client(self) -> Any:
        """The aiokafka client of the worker's producer (started with the app)."""
        return _faust.producer._ensure_producer().client

    def tables_recovered(self) -> bool:
        return bool(_faust.tables.recovery.completed.is_set())

    def recovery_progress(self) -> RecoveryProgress | None:
        """The current or last table recovery's progress (None before the first one knows its offsets)."""
        return recovery_watch.progress()


class FaustTailView:
    """streams.tail_watch.TailView on the worker's Faust consumer."""

    def generation(self) -> int:
        return consumer.generation()

    def recovering(self) -> bool:
        return bool(app.rebalancing) or consumer.recovering()

    def held(self, topic: str) -> Sequence[int]:
        assigned = app.consumer.assignment()
        return sorted(tp.partition for tp in app.assignor.assigned_actives() if tp.topic == topic and tp in assigned)

    async def stable_ends(self, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
        # aiokafka's end_offsets with the consumer's read_committed isolation (faust_patches 1): the LSO
        ends = await asyncio.wait_for(app.consumer.highwaters(*(TP(t, p) for t, p in tps)), TAIL_REQUEST_TIMEOUT_S)
        return {(tp.topic, tp.partition): offset for tp, offset in ends.items() if offset is not None}

    def in_flight(self, topic: str, partition: int) -> bool:
        """Handed to an agent and not acknowledged, waiting in an agent's channel, or fetched by
        aiokafka and not yet handed over."""
        tp = TP(topic, partition)
        faust_consumer = _faust.consumer
        if any(m.tp == tp for m in list(faust_consumer._unacked_messages)):
            return True
        for channel in list(_faust.topics._tp_index.get(tp, ())):
            queue = getattr(channel, "_queue", None)
            waiting = list(queue._queue) if queue is not None else []
            if any(getattr(getattr(event, "message", None), "tp", None) == tp for event in waiting):
                return True
        fetcher = getattr(faust_consumer._thread._consumer, "_fetcher", None)
        return fetcher is not None and tp in getattr(fetcher, "_records", {})

    def non_records(self, topic: str, partition: int, start: int, end: int) -> bool:
        return aiokafka_patches.non_records.covers((topic, partition), start, end)

    def committed(self, topic: str, partition: int) -> int | None:
        """The consumer's committed offset (the next one to read after a restart), None if unknown."""
        offset: int | None = _faust.consumer._committed_offset.get(TP(topic, partition))
        return offset

    def acknowledged(self, topic: str, partition: int) -> int | None:
        """The committed offset moved through the acknowledged offsets that follow it without a hole:
        what the next commit will store (Faust commits every few seconds)."""
        tp = TP(topic, partition)
        offset: int | None = _faust.consumer._committed_offset.get(tp)
        if offset is None:
            return None
        acked = set(_faust.consumer._acked.get(tp, ()))
        while offset in acked:
            offset += 1
        return offset

    def describe(self, topic: str, partition: int) -> str:
        tp = TP(topic, partition)
        faust_consumer = _faust.consumer
        position: Any = "?"
        try:
            assignment = faust_consumer._thread._consumer._subscription.subscription.assignment
            position = assignment.state_value(tp).position
        except AttributeError:  # not assigned any more, or no subscription: say so, do not guess
            position = "none"
        return (
            f"committed {faust_consumer._committed_offset.get(tp)}, read {faust_consumer._read_offset.get(tp)}, "
            f"fetch position {position}, paused {tp in faust_consumer._paused_partitions}, "
            f"acknowledged {sorted(faust_consumer._acked.get(tp, ()))[:5]}"
        )

    async def seek(self, topic: str, partition: int, offset: int) -> bool:
        """Seek, and fetch: a stream partition still paused outside a rebalance (the watch never
        asks during one) is resumed too, or no fetch would bring anything."""
        tp = TP(topic, partition)
        faust_consumer = _faust.consumer
        if not await _seek_wait(tp, offset):
            return False
        if tp in faust_consumer._paused_partitions or tp not in faust_consumer._get_active_partitions():
            log.warning("tail watch: %s[%d] was paused outside a rebalance; resumed", topic, partition)
            faust_consumer.resume_partitions({tp})
        return True


TAIL_REQUEST_TIMEOUT_S = 10.0


async def _seek_wait(tp: Any, offset: int) -> bool:
    """Faust's ``seek_wait`` of ``tp`` to ``offset``; False if this worker no longer holds ``tp``."""
    if tp not in app.consumer.assignment():
        return False
    try:
        await app.consumer.seek_wait({tp: offset})
    except IllegalStateError:  # revoked between the check and the seek
        return False
    return True


class RecoveryWatch:
    """Follows Faust's table recovery (faust_patches.observe_recovery reports its start, the seek to
    its start offsets and its end) and tells how far it is: per active changelog partition, the
    records from the start offset to the highwater read at the start (Faust's own ``active_offsets``
    and ``active_highwaters``). An INFO line every ``log_seconds`` while it lasts, and one when it
    ends with records read."""

    def __init__(self, log_seconds: float, clock: Any = time.monotonic) -> None:
        self.log_seconds = log_seconds
        self.clock = clock
        self.recovery: Any = None
        self.start: dict[Any, int] | None = None  # tp → offset recovery started after (-1: none)
        self.started_at = 0.0
        self.ended_at: float | None = None
        self.recovering = False
        self.task: asyncio.Future[None] | None = None

    def started(self, recovery: Any) -> None:
        self.recovery = recovery
        if not self.recovering:  # a new recovery (Faust marks one started twice; see observe_recovery)
            self.recovering, self.start, self.ended_at = True, None, None
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._log_progress())

    def seeked(self, recovery: Any) -> None:
        self.recovery = recovery
        offsets = recovery.active_offsets
        self.start = {tp: _offset(offsets.get(tp)) for tp in recovery.active_tps}
        self.started_at = self.clock()

    def ended(self, recovery: Any) -> None:
        if not self.recovering:
            return
        self.recovering, self.ended_at = False, self.clock()
        final = self.progress()
        if final is not None and final.records_total:
            log.info("tables: %s", final.describe())

    def progress(self) -> RecoveryProgress | None:
        """The current (or last) recovery's progress; None before its start offsets are known."""
        recovery, start = self.recovery, self.start
        if recovery is None or start is None:
            return None
        highwaters, offsets = recovery.active_highwaters, recovery.active_offsets
        records_done = records_total = partitions_done = 0
        for tp, first in start.items():
            highwater = _offset(highwaters.get(tp, first))  # Faust's highwater: the last offset (-1: none)
            total = max(highwater - first, 0)
            done = min(max(_offset(offsets.get(tp, first)) - first, 0), total)
            records_total += total
            records_done += done
            partitions_done += done >= total
        ended = self.ended_at if self.ended_at is not None else self.clock()
        return RecoveryProgress(
            records_done=records_done,
            records_total=records_total,
            partitions_done=partitions_done,
            partitions_total=len(start),
            seconds=max(ended - self.started_at, 0.0),
            done=not self.recovering,
        )

    async def _log_progress(self) -> None:
        while self.recovering:
            await asyncio.sleep(self.log_seconds)
            current = self.progress()
            if self.recovering and current is not None and current.records_total:
                log.info("tables: %s", current.describe())


def _offset(value: int | None) -> int:
    return -1 if value is None else value


recovery_watch = RecoveryWatch(settings.worker_recovery_log_seconds)
faust_patches.observe_recovery(recovery_watch)
consumer = FaustConsumer()
tail_view = FaustTailView()
