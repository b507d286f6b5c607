"""Every record of a partition applied once, in offset order, whatever the consumer does.

The control and idempotency agents keep, in their own changelog-backed table, the next offset of
each source partition they must apply (one key per table partition, written in the same RocksDB
write batch and changelog batch as the states of the records before it). So the progress moves
with the states: to another worker on a rebalance, back from the changelog after a lost disk.
Faust's committed offset only says where the consumer starts reading; it is never trusted to
say what was applied.

For each record the agent asks :meth:`PartitionProgress.admit`:

- below the next offset: applied before (a redelivery after a rebalance or a crash) → skip;
- at the next offset (or the partition was never written): apply;
- above it: records between never reached the agent (a rebalance loss, see the README's faults
  section). The agent does not apply it: it seeks the consumer back to the next offset and drops
  what was fetched before the seek. The first record at or below the one that came instead,
  after the seek, decides: if it is the awaited offset, the missing records are applied in order;
  if it is later, it is sought once more (records fetched before a seek can move Faust's read
  offset past those fetched again, which it then drops as read), and if the same record comes
  first again the broker holds no record in between (transaction markers, aborted or compacted
  records), which is logged as a hole and passed. A seek that brings nothing back is
  tried again; after ``MAX_SEEKS`` the records are given up as lost: an ERROR line and
  ``tocsin_record_gaps_total``, which every end-to-end test requires to be 0.

A batch is applied only while no table recovery is under way, and only its records of partitions
this worker holds (:func:`applicable`), inside ``source.applying()`` (a recovery starts once the
batches in flight have stored their states: tables/faust_patches.py, 7). From a rebalance's assignment
to the end of its recovery Faust rewrites the tables (it reads the changelog from the stored
offset), and a batch handed over then — fetched before the rebalance, held in the stream — read a
partial state: tests/e2e/test_scaling.py saw the 85th value of 16 keys decided SUPPRESS from a
state four records old, mid-recovery. A record of a partition gone to another worker is that
worker's to apply (a write here would reach its changelog). Held-back records are acknowledged
unapplied; after every rebalance each partition is sent back to its stored next offset when the
committed offset is past it (tables.faust_adapter.FaustConsumer.keep_aligned), so they come again
at once.

Transactions: the API writes publishes in Kafka transactions (api/publisher.py) and the consumer
reads committed records only, so each transaction leaves an offset with no record (its commit
marker) in each partition it wrote, and an aborted one leaves its records and its abort marker
unread. A seek back for each would cost a round trip per transaction. The fetcher sees those
offsets go by (it skips the control and aborted batches) and records them
(tables/offset_ranges.py, tables/aiokafka_patches.py, faust_patches.py 8): a jump whose every offset the fetcher skipped
is passed at once. Nothing else is: a marker is written when its transaction commits, after
whatever other producers appended meanwhile, so counting the markers a transaction owes (the rule
before this one) passed a lost record that came between a transaction's last record and its marker.
The stored value keeps its old form (``offset`` or ``offset/owed``); the count is no longer read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from app.observability import metrics
from streams.dead_letter import send_dead_letter
from tables.codecs import PROGRESS_KEY, dump_progress
from tables.control import worker_consumer as source
from tables.state import PartitionState, SourceConsumer

log = logging.getLogger(__name__)

MAX_SEEKS = 5
RESEEK_AFTER_S = 5.0


class Admit(Enum):
    APPLY = "apply"
    SKIP = "skip"  # applied before
    DROP = "drop"  # past a hole being fetched again


@dataclass
class Hole:
    expected: int  # the first offset not yet applied: where the consumer is sent back to
    seen: int  # the offset that came instead
    sought: bool = False
    seeks: int = 0
    since: float = 0.0
    stale: bool = False  # a record fetched before the seek came after it: seek again
    first_after_seek: int | None = None  # the first record at or below ``seen`` after the last seek


_UNKNOWN = object()


class PartitionProgress:
    """The next offset per source partition of one agent, within one consumer generation (a new
    generation reads each partition's offset from the table again)."""

    def __init__(
        self,
        stage: str,
        non_records: Callable[[int, int, int], bool] = lambda _partition, _start, _end: False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stage = stage
        self.non_records = non_records  # (partition, start, end): the fetcher skipped every offset of [start, end)
        self.clock = clock
        self.next: dict[int, int | None] = {}
        self.applied: dict[int, int | None] = {}  # ``next`` as of the last batch whose states were written
        self.holes: dict[int, Hole] = {}
        self.generation: object = _UNKNOWN
        self.touched: dict[int, Any] = {}  # partition → the batch's last applied event of it
        self.skipped = 0

    def start_batch(self, generation: object) -> None:
        """Before each attempt at a batch: a new generation forgets everything; an attempt that
        failed before its states were written leaves no trace (its records come again)."""
        if generation != self.generation:
            self.applied.clear()
            self.holes.clear()
            self.generation = generation
        self.next = dict(self.applied)
        self.touched = {}
        self.skipped = 0

    def batch_written(self) -> None:
        """The batch's states and markers are stored: its offsets count as applied."""
        self.applied = dict(self.next)

    def admit(self, event: Any, load: Callable[[], int | tuple[int, int] | None]) -> Admit:
        """What to do with ``event``; ``load`` reads the partition's stored next offset, or the next
        offset and the (no longer read) commit markers owed (called once per partition and
        generation, with the event's partition current)."""
        partition, offset = event.message.partition, event.message.offset
        nxt = self.next.get(partition, _UNKNOWN)
        if nxt is _UNKNOWN:
            stored = load()
            nxt = stored[0] if isinstance(stored, tuple) else stored
            self.next[partition] = nxt
        assert nxt is None or isinstance(nxt, int)
        if nxt is not None and offset < nxt:
            self.skipped += 1
            return Admit.SKIP
        hole = self.holes.get(partition)
        if nxt is None or offset == nxt:
            if hole is not None:
                log.warning(
                    "%s: partition %d: records %d..%d fetched again after they had not reached the agent",
                    self.stage,
                    partition,
                    hole.expected,
                    hole.seen - 1,
                )
                del self.holes[partition]
            return self._apply(event, partition, offset)
        # offset > nxt: the records from nxt did not come, or nxt..offset-1 hold none (markers, aborted)
        if self.non_records(partition, nxt, offset):
            metrics.OFFSET_MARKERS.labels(self.stage).inc(offset - nxt)
            if hole is not None:
                log.info("%s: partition %d: offsets %d..%d hold no record", self.stage, partition, nxt, offset - 1)
                del self.holes[partition]
            return self._apply(event, partition, offset)
        if hole is None:
            self.holes[partition] = Hole(nxt, offset)
            metrics.OFFSET_REFETCHES.labels(self.stage).inc()
            log.warning(
                "%s: partition %d: records %d..%d did not reach the agent before %d; fetching them again",
                self.stage,
                partition,
                nxt,
                offset - 1,
                offset,
            )
            return Admit.DROP
        once_more = hole.first_after_seek != offset and hole.seeks < MAX_SEEKS
        if hole.sought and offset <= hole.seen and once_more:
            # The first record after the seek is past ``nxt``: the broker has none in between, or
            # records fetched before the seek moved Faust's read offset past those fetched again
            # (it drops them as read: test_scaling lost two records so). Seek once more: the same
            # record first after two seeks decides (offsets the fetcher skipped are passed at once).
            hole.first_after_seek, hole.sought = offset, False
            return Admit.DROP
        if hole.sought and offset <= hole.seen:
            # the same first record after two seeks: the broker has none in between
            metrics.OFFSET_HOLES.labels(self.stage).inc(offset - nxt)
            log.info("%s: partition %d: offsets %d..%d hold no record", self.stage, partition, nxt, offset - 1)
            del self.holes[partition]
            return self._apply(event, partition, offset)
        if hole.sought and self.clock() - hole.since > RESEEK_AFTER_S:
            if hole.seeks >= MAX_SEEKS:
                metrics.RECORD_GAPS.labels(self.stage, str(partition)).inc(offset - nxt)
                log.error(
                    "%s: partition %d: records %d..%d are lost: %d seeks back to %d brought none of them",
                    self.stage,
                    partition,
                    nxt,
                    offset - 1,
                    hole.seeks,
                    nxt,
                )
                del self.holes[partition]
                return self._apply(event, partition, offset)
            hole.sought = False  # seek again after this batch
        elif hole.sought and offset > hole.seen:
            # Fetched before the seek (after it, the records come from ``expected`` again, and one
            # at or below ``seen`` ends the hole). Faust moved its read offset past the seek target
            # with it, so it would drop the records fetched again: seek again after this batch.
            hole.stale = True
        return Admit.DROP

    def _apply(self, event: Any, partition: int, offset: int) -> Admit:
        self.next[partition] = offset + 1
        self.touched[partition] = event
        return Admit.APPLY

    def markers(self) -> list[tuple[Any, bytes, bytes]]:
        """``(event, key, value)`` of each partition's new next offset, to write with the states."""
        return [(event, PROGRESS_KEY, dump_progress(self.next[p] or 0)) for p, event in self.touched.items()]

    def seeks_due(self) -> dict[int, int]:
        """Partitions to send back, and where to: each hole not yet asked for again. Marks them asked."""
        due = {}
        for partition, hole in self.holes.items():
            if hole.stale or not hole.sought:
                if not hole.sought:  # one more try (a stale fetch alone: the same seek again, not counted)
                    hole.seeks += 1
                hole.stale, hole.sought, hole.since = False, True, self.clock()
                due[partition] = hole.expected
        return due

    def forget(self, partition: int) -> None:
        """The partition left this worker (a seek found it unassigned)."""
        self.holes.pop(partition, None)
        self.next.pop(partition, None)


def applicable(stage: str, events: list[Any], topic: Any, consumer: SourceConsumer = source) -> list[Any]:
    """The records of ``events`` the agent may apply now, inside ``source.applying()`` (module
    docstring): none while the tables recover, else those of the partitions of ``topic`` this
    worker holds."""
    if consumer.recovering():
        metrics.HELD_BACK_RECORDS.labels(stage).inc(len(events))
        log.info("%s: %d records held back: the tables are recovering (fetched again after it)", stage, len(events))
        return []
    active = consumer.active_partitions(topic)
    kept = [event for event in events if event.message.partition in active]
    if len(kept) < len(events):
        gone, held = sorted({event.message.partition for event in events} - active), len(events) - len(kept)
        metrics.HELD_BACK_RECORDS.labels(stage).inc(held)
        log.info("%s: %d records of partitions %s left: another worker holds them", stage, held, gone)
    return kept


async def dead_letter_and_pass(
    stage: str, progress: PartitionProgress, table: PartitionState, event: Any, reason: str
) -> None:
    """A record that fails alone (streams/batches.py): to the dead-letter topic with the reason,
    and the partition's progress past it in ``table``, so the records after it are processed."""
    await send_dead_letter(stage, event, reason)
    async with source.applying():
        if source.recovering():
            return  # fetched again after the recovery (and dead-lettered again)
        progress.start_batch(source.generation())
        source.use_event(event)
        if progress.admit(event, table.progress) is Admit.APPLY:
            await table.write(progress.markers())
            progress.batch_written()
