"""Bulk recovery: a stage's changelog partitions read back into their local stores in fetched
batches, each fetch one RocksDB write batch with its changelog offset (quixstreams'
``RecoveryManager``, Kafka Streams' restore consumer). No record goes through a stream, an event
object or a queue: the cost per changelog record is aiokafka's fetch and one ``WriteBatch.put``.

A store resumes from the changelog offset it holds; a store that holds an offset past the
changelog's end (the changelog was deleted and made again) is wiped and read from the start.
Progress (records done of the total, ETA) goes to the log periodically and to ``/readyz``
through :class:`RestoreProgress`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, TopicPartition

from app.observability.health import RecoveryProgress
from tables.partition_store import PartitionStore

log = logging.getLogger(__name__)
FETCH_TIMEOUT_MS = 500
MAX_RECORDS = 50_000  # per fetch: one write batch each
LOG_EVERY_S = 5.0


@dataclass
class RestoreProgress:
    """What the current restore has read; :meth:`snapshot` is ``/readyz``'s ``recovery`` object."""

    records_total: int = 0
    records_done: int = 0
    partitions_total: int = 0
    partitions_done: int = 0
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None  # None while the restore runs
    known: bool = False  # the offsets to read are known (the totals are final)

    def snapshot(self) -> RecoveryProgress:
        end = self.ended if self.ended is not None else time.monotonic()
        return RecoveryProgress(
            records_done=self.records_done,
            records_total=self.records_total,
            partitions_done=self.partitions_done,
            partitions_total=self.partitions_total,
            seconds=end - self.started,
            done=self.ended is not None,
        )


async def restore(
    consumer: AIOKafkaConsumer,
    changelog: str,
    stores: Mapping[int, PartitionStore],
    reopen: Callable[[int], PartitionStore],
    progress: RestoreProgress,
    log_every: float = LOG_EVERY_S,
) -> dict[int, PartitionStore]:
    """Bring every store of ``stores`` (by partition) up to its changelog partition's end; returns
    the stores to use (a wiped one is replaced by ``reopen(partition)``). ``consumer`` is a consumer
    of no group, used only here."""
    stores = dict(stores)
    tps = {p: TopicPartition(changelog, p) for p in stores}
    if not tps:
        progress.known = True
        progress.ended = time.monotonic()
        return stores
    consumer.assign(list(tps.values()))
    try:
        begin = await consumer.beginning_offsets(list(tps.values()))
        end = await consumer.end_offsets(list(tps.values()))
        pending: dict[TopicPartition, int] = {}
        for p, tp in tps.items():
            held = stores[p].changelog_offset()
            if held is not None and held >= end[tp]:
                log.warning(
                    "store of %s partition %d holds changelog offset %d past the changelog's end %d: rebuilt",
                    changelog,
                    p,
                    held,
                    end[tp],
                )
                stores[p].wipe()
                stores[p] = reopen(p)
                held = None
            start = begin[tp] if held is None else max(held + 1, begin[tp])
            if start < end[tp]:
                pending[tp] = end[tp]
                consumer.seek(tp, start)
                progress.records_total += end[tp] - start
        progress.partitions_total += len(tps)
        progress.partitions_done += len(tps) - len(pending)
        progress.known = True
        consumer.pause(*[tp for tp in tps.values() if tp not in pending])
        logged = time.monotonic()
        while pending:
            fetched = await consumer.getmany(*pending, timeout_ms=FETCH_TIMEOUT_MS, max_records=MAX_RECORDS)
            for tp, records in fetched.items():
                if records:
                    stores[tp.partition].apply_records(((r.key, r.value) for r in records), records[-1].offset)
                    progress.records_done += len(records)
            for tp in list(pending):
                if await consumer.position(tp) >= pending[tp]:
                    del pending[tp]
                    consumer.pause(tp)
                    progress.partitions_done += 1
            if pending and time.monotonic() - logged >= log_every and progress.records_done < progress.records_total:
                logged = time.monotonic()
                log.info("%s: %s", changelog, progress.snapshot().describe())
    finally:
        consumer.unsubscribe()
    progress.ended = time.monotonic()
    return stores
