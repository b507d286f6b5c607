"""A stage that takes whole fetches, from fetch to commit, on an aiokafka consumer it owns (the
checkpoint model of quixstreams and Kafka Streams).

One :class:`BatchStage` per stage and worker process: a consumer in the stage's own group
(``<worker id>.<stage>``, so an operator scales it by partitions like any agent), the stage's
local stores (:mod:`tables.partition_store`) for exactly the partitions it is assigned, and one
loop:

1. fetch: ``getmany`` returns what the broker has for the assigned partitions;
2. restore: a partition assigned since the last fetch is first brought up to its changelog's end
   (:mod:`tables.changelog_restore`, bulk);
3. decide: the stage's handler takes the whole fetch (records by partition) and a
   :class:`Checkpoint`, reads state from the stores, queues its outputs and state changes;
4. :meth:`Checkpoint.commit`: send the outputs, send the changelog records, wait until the broker
   has them all, commit the source offsets, then write each store's changes with their changelog
   offset as one RocksDB write batch.

A partition's committed offset is therefore the first record whose effects are not yet durable,
by construction: a worker killed anywhere redelivers exactly the records whose commit it did not
reach, and nothing has to be found again later. Records redelivered after a kill between steps 4's
send and commit are decided again from the changelog's state (the handler skips what a key's
stored offset says it applied; outputs carry effect ids that the sinks deduplicate).

A rebalance: the revocation moves the stage's epoch at once, then waits for the batch in flight to
end. A batch whose epoch moved before its commit goes no further (nothing sent if it was still
being decided; no commit if it was being sent: its outputs are deduplicated and its states' offsets
skip its records at the next owner), and a batch fetched before the revocation is dropped
unprocessed; the next owner reads them from the committed offset. Every assigned partition, also one
this worker kept, is brought up to its changelog's end before its records are decided. A commit the
group refuses (this member was dropped) moves the epoch too, and the partitions are sought back. A partition with no
committed offset in the stage's group takes the offset the previous release's group committed
(``legacy_group``: an upgrade in place neither skips nor repeats what was applied).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import CommitFailedError, KafkaError
from aiokafka.structs import ConsumerRecord

from app.errors import TocsinError
from app.kafka.producer_errors import PRODUCER_FATAL
from tables.changelog_restore import RestoreProgress, restore
from tables.changelog_send import send_changelog
from tables.partition_store import PartitionStore

log = logging.getLogger(__name__)

Records = dict[int, list[ConsumerRecord[bytes, bytes]]]


@dataclass
class Checkpoint:
    """The outputs and state changes of one batch, made durable together by :meth:`commit`."""

    producer: AIOKafkaProducer
    changelog: str | None
    # (topic, partition, key, value, timestamp in ms, headers)
    outputs: list[tuple[str, int | None, bytes | None, bytes, int | None, list[tuple[str, bytes]] | None]] = field(
        default_factory=list
    )
    changes: dict[int, dict[bytes, bytes | None]] = field(default_factory=lambda: defaultdict(dict))

    def send(
        self,
        topic: str,
        value: bytes,
        *,
        partition: int | None = None,
        key: bytes | None = None,
        timestamp_ms: int | None = None,
        headers: list[tuple[str, bytes]] | None = None,
    ) -> None:
        """Queue an output record (sent at commit, before any offset moves)."""
        self.outputs.append((topic, partition, key, value, timestamp_ms, headers))

    def put(self, partition: int, key: bytes, value: bytes | None) -> None:
        """Queue a state change of ``partition``'s store (None deletes); the last one of a key wins."""
        self.changes[partition][key] = value

    async def flush(self) -> dict[int, int]:
        """Steps 1-3: the outputs sent and acknowledged, then the changelog records sent and
        acknowledged; the last changelog offset of each partition that changed. Never the changelog
        before the outputs: a state whose outputs were lost (a kill, a partition refusing them) would
        make the next owner skip their records as applied."""
        futures = [
            await self.producer.send(topic, value, key=key, partition=partition, timestamp_ms=at, headers=headers)
            for topic, partition, key, value, at, headers in self.outputs
        ]
        await asyncio.gather(*futures)
        if self.changelog is None:
            return {}
        return await send_changelog(self.producer, self.changelog, {p: c.items() for p, c in self.changes.items()})

    def write_local(self, stores: Mapping[int, PartitionStore], changelog_offsets: Mapping[int, int]) -> None:
        """Step 5: each store's changes and its changelog offset, one write batch each."""
        for partition, changes in self.changes.items():
            store = stores.get(partition)
            if store is not None and partition in changelog_offsets:
                store.apply(changes, changelog_offsets[partition])


Handler = Callable[[Records, Checkpoint, Mapping[int, PartitionStore]], Awaitable[None]]
Skip = Callable[[ConsumerRecord[bytes, bytes], str], Awaitable[None]]


class Revoked(TocsinError):
    """The batch's partitions were revoked before its commit: the next owner decides it again.
    Nothing for an operator to do: the batch is dropped, never lost."""

    def __init__(self) -> None:
        super().__init__("the batch's partitions were revoked before its commit")


@contextlib.contextmanager
def _dropped_when_revoked(stage: str) -> Iterator[None]:
    try:
        yield
    except Revoked:
        log.info("%s: partitions revoked before the batch's commit; their next owner decides it", stage)


class SourceStage(ConsumerRebalanceListener):  # type: ignore[misc]  # aiokafka ships no type hints for it
    """What every stage keeps of its source: its consumer (in the stage's own group), the partitions
    it is assigned, the offsets this process committed, and the epoch a revocation moves."""

    def __init__(
        self,
        name: str,
        source: str,
        consumer: AIOKafkaConsumer,
        max_records: int,
        fetch_timeout_ms: int,
        legacy_offsets: LegacyOffsets | None,
    ) -> None:
        self.name, self.source, self.consumer = name, source, consumer
        self.max_records, self.fetch_timeout_ms = max_records, fetch_timeout_ms
        self.legacy_offsets = legacy_offsets
        self.assigned: frozenset[int] = frozenset()
        self.joined = False  # a first assignment came (possibly of no partition)
        self.to_seek: set[int] = set()
        self.epoch = 0  # moves at every revocation: what was fetched or handed out before it is dropped
        self.lock = asyncio.Lock()
        self.applied: dict[int, int] = {}  # partition → next offset to apply (committed by this process)

    def lag(self) -> Iterator[tuple[TopicPartition, int]]:
        """``(tp, records not applied yet)`` per assigned partition: high watermark minus the offset
        this process committed (partitions it has not committed yet are left out)."""
        for p in sorted(self.assigned):
            tp = TopicPartition(self.source, p)
            highwater = self.consumer.highwater(tp)
            applied = self.applied.get(p)
            if highwater is not None and applied is not None:
                yield tp, max(highwater - applied, 0)

    async def _seek(self) -> None:
        """Place the partitions assigned since the last fetch (:func:`place`); called holding
        ``lock``, so the assignment cannot change meanwhile. A group that moved on without this
        member refuses the first commit: the partitions are placed again after the next assignment."""
        partitions = sorted(p for p in self.to_seek if p in self.assigned)
        self.to_seek.clear()
        try:
            self.applied.update(await place(self.consumer, self.name, self.source, partitions, self.legacy_offsets))
        except CommitFailedError:
            log.warning("%s: the group refused the first commit; the partitions are placed again", self.name)
            self.epoch += 1
            self.to_seek |= self.assigned


class BatchStage(SourceStage):
    """The loop of one stage (module docstring). ``consumer`` subscribes in the stage's group;
    ``restorer`` is a consumer of no group for the changelog; ``data_dir`` holds the stores. A stage
    without a changelog keeps no stores (a sink: what it applied is in its committed offsets)."""

    def __init__(
        self,
        name: str,
        source: str,
        changelog: str | None,
        consumer: AIOKafkaConsumer,
        restorer: AIOKafkaConsumer | None,
        producer: AIOKafkaProducer,
        data_dir: Path,
        handler: Handler,
        *,
        max_records: int = 10_000,
        fetch_timeout_ms: int = 100,
        legacy_offsets: LegacyOffsets | None = None,
        on_committed: Callable[[], None] | None = None,
        restore_log_seconds: float = 5.0,
        new_producer: Callable[[], Awaitable[AIOKafkaProducer]] | None = None,
        commit_every_s: float = 0.0,
    ) -> None:
        super().__init__(name, source, consumer, max_records, fetch_timeout_ms, legacy_offsets)
        self.changelog, self.restorer, self.producer = changelog, restorer, producer
        self.data_dir = data_dir
        self.handler = handler
        self.on_committed = on_committed
        self.restore_log_seconds = restore_log_seconds
        self.new_producer = new_producer
        # A stage without state may commit the offsets of its applied batches together, at most this
        # often (0: every batch): its effects are durable already and deduplicated downstream.
        assert commit_every_s == 0 or changelog is None, "a stage with state commits every batch"
        self.commit_every_s = commit_every_s
        self.uncommitted: dict[int, int] = {}  # partition → offset applied and not committed yet
        self.committed_at = 0.0
        self.renewing = asyncio.Lock()
        self.stores: dict[int, PartitionStore] = {}
        self.between = False  # revoked, the next assignment not come yet
        self.to_restore: set[int] = set()
        self.restore_progress = RestoreProgress()  # not known until the first assignment's restore

    # -- the rebalance listener (called by aiokafka's coordinator) --------------------------------

    async def on_partitions_revoked(self, revoked: Any) -> None:
        epoch = self.epoch
        self.epoch += 1
        self.between = True
        async with self.lock:  # the batch in flight commits (or finds itself revoked) first
            try:
                if self.uncommitted:  # what was applied is committed before the partitions go
                    await self._commit(dict(self.uncommitted), epoch, check=False)
            except (Revoked, KafkaError) as exc:  # the next owner applies it again (deduplicated)
                log.info("%s: the commit before the rebalance failed (%r); the next owner repeats it", self.name, exc)
            finally:
                self.uncommitted = {}
                self.assigned = frozenset()

    async def on_partitions_assigned(self, assigned: Any) -> None:
        partitions = frozenset(tp.partition for tp in assigned if tp.topic == self.source)
        async with self.lock:
            for p in set(self.stores) - partitions:
                self.stores.pop(p).close()
                self.applied.pop(p, None)
            # Every assigned partition, also one kept open: another worker may have owned it since
            # (this one dropped from the group and back, unseen); the restore resumes from the
            # changelog offset the store holds, so a store that is up to date costs two offset reads.
            self.to_restore |= partitions
            self.to_seek |= partitions
            self.assigned = partitions
            self.joined = True
            self.between = False
            log.info("%s: assigned partitions %s", self.name, sorted(partitions))

    # -- the loop ---------------------------------------------------------------------------------

    def store_path(self, partition: int) -> Path:
        return self.data_dir / f"{self.name}-{partition}.db"

    def open_store(self, partition: int) -> PartitionStore:
        return PartitionStore(self.store_path(partition))

    def ready(self) -> bool:
        """Assigned (not between a revocation and the next assignment), and nothing left to restore."""
        return self.joined and not self.between and not self.to_restore

    async def _prepare_partitions(self) -> None:
        """Open and restore the stores of newly assigned partitions; place partitions without a
        committed offset in this group where the previous release's group left them."""
        if self.to_restore and self.changelog is None:  # a stage without state: nothing to open or read
            self.to_restore.clear()
        if self.to_restore:
            progress = self.restore_progress = RestoreProgress()
            opened = {p: self.stores.get(p) or self.open_store(p) for p in sorted(self.to_restore)}
            if self.changelog is not None and self.restorer is not None:
                try:
                    opened = await restore(
                        self.restorer, self.changelog, opened, self.open_store, progress, self.restore_log_seconds
                    )
                except BaseException:
                    for p, store in opened.items():
                        if self.stores.get(p) is not store:
                            store.close()  # RocksDB's lock is released for the next attempt
                    raise
            self.stores.update(opened)
            self.to_restore.clear()
            log.info("%s: %s", self.name, progress.snapshot().describe())
        if self.to_seek:
            # Every newly assigned partition is placed explicitly: what a fetch returned since the
            # assignment is dropped unprocessed (it may predate the restore), so the position goes
            # back to the committed offset, else the previous release's, else the beginning.
            await self._seek()

    async def run(self, skip: Skip, process_until_done: Callable[..., Awaitable[None]]) -> None:
        """Fetch, decide, commit, forever (cancel to stop)."""
        while True:
            epoch = self.epoch
            fetched = await self.consumer.getmany(timeout_ms=self.fetch_timeout_ms, max_records=self.max_records)
            async with self.lock:
                if self.uncommitted and not fetched and epoch == self.epoch:
                    try:
                        with _dropped_when_revoked(self.name):
                            await self._commit_due(epoch, force=True)  # a quiet spell: commit what was applied
                    except KafkaError as exc:  # kept, committed with the next batch or quiet fetch
                        log.warning("%s: committing what was applied failed, trying again: %r", self.name, exc)
                if self.to_restore or self.to_seek:
                    await self._prepare_partitions()
                    continue  # positions may have moved: fetch again from them
                if epoch != self.epoch or not fetched:
                    continue
                records = [r for tp, rs in fetched.items() if tp.partition in self.assigned for r in rs]
                if not records:
                    continue
                # Per partition, the fetch's last record and the consumer's position after it: past
                # the transaction markers the fetcher passed over, so a caught-up partition commits
                # its end and not the offset of its last marker.
                ends = {
                    tp.partition: (rs[-1].offset, await self.consumer.position(tp))
                    for tp, rs in fetched.items()
                    if rs and tp.partition in self.assigned
                }

                async def process(
                    batch: list[ConsumerRecord[bytes, bytes]],
                    epoch: int = epoch,
                    ends: dict[int, tuple[int, int]] = ends,
                ) -> None:
                    with _dropped_when_revoked(self.name):
                        await self._process(batch, epoch, ends)

                async def skip_one(
                    record: ConsumerRecord[bytes, bytes],
                    reason: str,
                    epoch: int = epoch,
                    ends: dict[int, tuple[int, int]] = ends,
                ) -> None:
                    with _dropped_when_revoked(self.name):
                        await skip(record, reason)
                        await self._commit({record.partition: _next(record, ends)}, epoch)

                await process_until_done(self.name, process, records, skip_one)

    async def _process(
        self, batch: list[ConsumerRecord[bytes, bytes]], epoch: int, ends: Mapping[int, tuple[int, int]]
    ) -> None:
        if epoch != self.epoch:
            return  # revoked meanwhile: dropped, the next owner decides it
        by_partition: Records = defaultdict(list)
        for record in batch:
            by_partition[record.partition].append(record)
        checkpoint = Checkpoint(self.producer, self.changelog)
        await self.handler(by_partition, checkpoint, self.stores)
        if epoch != self.epoch:
            raise Revoked()  # revoked while deciding: nothing is sent; the next owner decides it
        try:
            changelog_offsets = await checkpoint.flush()
        except PRODUCER_FATAL:
            await self.renew_producer(checkpoint.producer)
            raise  # the batch is retried on the new producer
        offsets = {p: _next(rs[-1], ends) for p, rs in by_partition.items()}
        if self.commit_every_s:
            self.uncommitted.update(offsets)
            await self._commit_due(epoch)
        else:
            await self._commit(offsets, epoch)
        checkpoint.write_local(self.stores, changelog_offsets)
        if self.on_committed is not None:
            self.on_committed()

    async def renew_producer(self, refused: AIOKafkaProducer | None = None) -> None:
        """Replace a producer whose id or sequence the broker refuses (it would fail every send after);
        ``refused`` is the producer that failed (another caller may have replaced it already)."""
        if self.new_producer is None:
            return
        async with self.renewing:
            if refused is not None and refused is not self.producer:
                return
            await self._replace_producer()

    async def _replace_producer(self) -> None:
        assert self.new_producer is not None
        old = self.producer
        log.warning("%s: the broker refused the producer's sequence; replacing the producer", self.name)
        self.producer = await self.new_producer()
        try:
            await old.stop()
        except Exception as exc:  # noqa: BLE001 - the old producer is broken; its stop may fail too
            log.info("%s: stopping the refused producer failed: %r", self.name, exc)

    async def _commit_due(self, epoch: int, force: bool = False) -> None:
        """Commit what was applied and not committed once ``commit_every_s`` passed (or now: ``force``)."""
        now = time.monotonic()
        if self.uncommitted and (force or now - self.committed_at >= self.commit_every_s):
            await self._commit(dict(self.uncommitted), epoch)
            self.uncommitted = {}
            self.committed_at = now

    async def _commit(self, offsets: dict[int, int], epoch: int, check: bool = True) -> None:
        if check and epoch != self.epoch:
            raise Revoked()
        for p, offset in offsets.items():  # a record skipped alone commits past what is pending before it
            if self.uncommitted.get(p, offset + 1) <= offset:
                del self.uncommitted[p]
        try:
            await self.consumer.commit({TopicPartition(self.source, p): o for p, o in offsets.items()})
        except CommitFailedError as exc:
            # The group moved on without this member (its revocation may come only with the next
            # heartbeat): what was fetched after this batch must not be decided on top of it.
            self.epoch += 1
            self.to_seek |= self.assigned
            raise Revoked() from exc
        self.applied.update(offsets)


LegacyOffsets = Callable[[list[TopicPartition]], Awaitable[dict[TopicPartition, int]]]


async def place(
    consumer: AIOKafkaConsumer, name: str, source: str, partitions: list[int], legacy_offsets: LegacyOffsets | None
) -> dict[int, int]:
    """Seek each of ``partitions`` to the offset its stage's group committed, else to where the
    previous release's group left it, else to its beginning; the offsets, by partition. Where the
    stage starts is its first commit: a quiet partition is drained from there."""
    tps = [TopicPartition(source, p) for p in partitions]
    committed = {tp: await consumer.committed(tp) for tp in tps}
    missing = [tp for tp, offset in committed.items() if offset is None]
    legacy = await legacy_offsets(missing) if missing and legacy_offsets is not None else {}
    beginnings = await consumer.beginning_offsets(missing) if missing else {}
    first: dict[TopicPartition, int] = {}
    placed: dict[int, int] = {}
    for tp in tps:
        offset = committed[tp]
        if offset is None:
            offset = legacy.get(tp)
            if offset is not None:
                log.info(
                    "%s: partition %d starts at %d, where the previous release left it", name, tp.partition, offset
                )
            else:
                offset = beginnings[tp]
            first[tp] = offset
        consumer.seek(tp, offset)
        placed[tp.partition] = offset
    if first:
        await consumer.commit(first)
    return placed


def _next(record: ConsumerRecord[bytes, bytes], ends: Mapping[int, tuple[int, int]]) -> int:
    """The offset to commit once ``record`` is applied: after it, or the consumer's position when
    it is the last record its fetch returned for its partition (only non-records lie between)."""
    last, position = ends.get(record.partition, (-1, -1))
    after: int = record.offset + 1
    return max(after, position) if after - 1 == last else after


async def legacy_committed(
    admin: AIOKafkaAdminClient, group: str, tps: list[TopicPartition]
) -> dict[TopicPartition, int]:
    """The offsets ``group`` committed for ``tps`` (those it committed at all)."""
    found = await admin.list_consumer_group_offsets(group, partitions=tps)
    return {tp: meta.offset for tp, meta in found.items() if meta is not None and meta.offset >= 0}
