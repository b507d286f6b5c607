"""A stage whose records are settled one by one, out of order, on an aiokafka consumer it owns: the
delivery stages, where one slow receiver must hold back nobody else's deliveries.

The stage hands out each fetched record as an :class:`AckedRecord`; the handler calls ``ack()``
once the record's effects are durable (its deliveries written). Per partition, the committed offset
is the first record not acknowledged yet, by construction: the records before it are all settled,
so a worker killed anywhere redelivers what was not written and nothing else. A rebalance: what
was acknowledged is committed before the partitions go, and acknowledgements of records handed
out before it are ignored afterwards (the next owner reads them again from the committed offset;
the handler deduplicates by effect id). A partition with no committed offset in the stage's group
starts where the previous release's group left it (``legacy_offsets``), else at its beginning.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import CommitFailedError
from aiokafka.structs import ConsumerRecord

from tables.batch_stage import LegacyOffsets, SourceStage
from tables.changelog_restore import RestoreProgress

log = logging.getLogger(__name__)


class AckedRecord:
    """One fetched record; ``message`` is the record itself (``timestamp`` in seconds, as Faust's)."""

    __slots__ = ("epoch", "headers", "key", "offset", "partition", "stage", "timestamp", "topic", "value")

    def __init__(self, record: ConsumerRecord[bytes, bytes], stage: AckedStage, epoch: int) -> None:
        self.topic, self.partition, self.offset = record.topic, record.partition, record.offset
        self.key, self.value, self.headers = record.key, record.value, record.headers
        self.timestamp = record.timestamp / 1000
        self.stage, self.epoch = stage, epoch

    @property
    def message(self) -> AckedRecord:
        return self

    def ack(self) -> None:
        self.stage.ack(self)


class _Acks:
    """One partition's records handed out and not yet committed, in offset order."""

    def __init__(self) -> None:
        self.handed: deque[int] = deque()
        self.acked: set[int] = set()
        self.next: int | None = None  # the first offset not settled, once one was
        self.committed: int | None = None  # the last of those committed

    def due(self) -> int | None:
        """The offset to commit now (None: nothing moved since the last commit)."""
        while self.handed and self.handed[0] in self.acked:
            offset = self.handed.popleft()
            self.acked.discard(offset)
            self.next = offset + 1
        return self.next if self.next != self.committed else None


class AckedStage(SourceStage):
    """The consumer side of one settled-by-record stage (module docstring)."""

    changelog = None  # no state: nothing to restore

    def __init__(
        self,
        name: str,
        source: str,
        consumer: AIOKafkaConsumer,
        *,
        max_records: int = 500,
        fetch_timeout_ms: int = 100,
        legacy_offsets: LegacyOffsets | None = None,
        commit_every_s: float = 0.5,
    ) -> None:
        super().__init__(name, source, consumer, max_records, fetch_timeout_ms, legacy_offsets)
        self.commit_every_s = commit_every_s  # acknowledgements within this are committed together
        self.acks: dict[int, _Acks] = {}
        self.to_commit = asyncio.Event()
        self.restore_progress = RestoreProgress(known=True)

    # -- the rebalance listener -------------------------------------------------------------------

    async def on_partitions_revoked(self, revoked: Any) -> None:
        async with self.lock:
            try:
                await self._commit_settled()  # what was written before the partitions go
            except Exception as exc:  # noqa: BLE001 - the next owner repeats it; its effects are deduplicated
                log.warning("%s: committing before the rebalance failed: %r", self.name, exc)
            self.epoch += 1
            self.acks.clear()
            self.assigned = frozenset()

    async def on_partitions_assigned(self, assigned: Any) -> None:
        partitions = frozenset(tp.partition for tp in assigned if tp.topic == self.source)
        self.epoch += 1
        self.acks = {p: _Acks() for p in partitions}
        self.applied = {p: o for p, o in self.applied.items() if p in partitions}
        self.to_seek |= partitions
        self.assigned = partitions
        self.joined = True
        log.info("%s: assigned partitions %s", self.name, sorted(partitions))

    def ready(self) -> bool:
        return self.joined

    # -- records and acknowledgements -------------------------------------------------------------

    def ack(self, record: AckedRecord) -> None:
        acks = self.acks.get(record.partition) if record.epoch == self.epoch else None
        if acks is not None:  # else: handed out before a rebalance; its next owner reads it again
            acks.acked.add(record.offset)
            self.to_commit.set()

    async def records(self) -> AsyncIterator[AckedRecord]:
        """Every record of the assigned partitions, in partition order, until cancelled."""
        committer = asyncio.create_task(self._commits())
        try:
            while True:
                epoch = self.epoch
                fetched = await self.consumer.getmany(timeout_ms=self.fetch_timeout_ms, max_records=self.max_records)
                if self.to_seek:
                    async with self.lock:  # no rebalance meanwhile (the revocation waits for the lock)
                        await self._seek()
                    continue  # what was fetched may predate the placement: fetch again
                if epoch != self.epoch:
                    continue
                for tp, batch in fetched.items():
                    acks = self.acks.get(tp.partition)
                    if acks is None:
                        continue
                    for record in batch:
                        if self.epoch != epoch:
                            break  # a rebalance while the handler held a record: the rest is dropped
                        acks.handed.append(record.offset)
                        yield AckedRecord(record, self, epoch)
        finally:
            committer.cancel()
            await asyncio.gather(committer, return_exceptions=True)

    async def _commits(self) -> None:
        while True:
            await self.to_commit.wait()
            await asyncio.sleep(self.commit_every_s)
            self.to_commit.clear()
            async with self.lock:
                try:
                    await self._commit_settled()
                except CommitFailedError:  # the group moved on without this member: placed again
                    log.warning("%s: the group refused a commit; the partitions are placed again", self.name)
                    self.epoch += 1
                    self.acks = {p: _Acks() for p in self.assigned}
                    self.to_seek |= self.assigned
                except Exception as exc:  # noqa: BLE001 - retried with the next acknowledgement
                    log.warning("%s: commit failed, trying again: %r", self.name, exc)
                    self.to_commit.set()
                    await asyncio.sleep(1.0)

    async def _commit_settled(self) -> None:
        acks = dict(self.acks)
        offsets = {p: o for p, a in acks.items() if (o := a.due()) is not None}
        if offsets:
            await self.consumer.commit({TopicPartition(self.source, p): o for p, o in offsets.items()})
            for p, offset in offsets.items():
                acks[p].committed = offset
            self.applied.update(offsets)
