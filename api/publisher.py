"""Publishes written in Kafka transactions: a 202 only once its record is committed, a 503 only
when its record will never be committed.

An idempotent producer alone cannot give the spec's rule ("any status but 202 means not
accepted"): after a produce timeout the record may still sit in the producer's buffer or in the
broker's socket buffer, be written later and be decided, while the publisher, told 503, sends it
again. Here every publish of a replica joins the next transaction of a transactional producer;
the worker reads committed records only (app/kafka/app.py), so a record of a transaction that is
not committed is never decided.

A batch publish (:meth:`TransactionalPublisher.publish_batch`) is one entry of the queue with all
its records: it joins a transaction whole, never split between two, so its records are committed
or aborted together (a batch larger than ``max_records`` gets a transaction of its own).

Each of ``lanes`` producers (transactional ids ``<id>-0``, ``<id>-1``, …) has one task that runs
its transactions one at a time. A transaction costs the broker about the same whatever it holds
(coordinator round trips, a write to the transaction log at each step, one marker per partition:
KIP-98 measured about 3 % of throughput for transactions of 100 ms), so publishes are grouped by
time: one lane at a time collects, until ``window`` seconds after the oldest queued publish
arrived and after the previous group was taken (or until ``max_records`` are queued), then takes
everything queued and runs the transaction while the next free lane collects the next group. At
most one transaction begins per window, so a busy moment fills transactions rather than adding
them; the lanes overlap, so a publish waits for at most one window (plus a transaction in
progress when every lane is busy, a wait that counts towards its window). A transaction's
partitions are those its publishes' keys map to: records of one key go to one partition, so a
busy key adds its publishes to a transaction, not partitions.

Each publish waits at most ``timeout`` seconds (TOCSIN_PRODUCE_TIMEOUT_SECONDS) from the moment
it was queued. When that passes before its transaction was handed to ``commit_transaction`` it
gives up (the caller answers 503) and its transaction is aborted: the task checks, right before
the commit and with no await in between, that no publish of the group gave up. Once the commit
is asked for, every publish of the group waits for its outcome, however long it takes: a 503
while the commit may still succeed would break the rule. A commit that raises means the
coordinator refused it (the producer was fenced or the transaction had timed out, and the
coordinator aborts such a transaction): 503 for the whole group.

A transaction that fails before the commit (a send timed out or failed, a publish gave up) is
aborted; if the abort does not finish within the timeout (the broker is down) or the producer is
broken, the producer is replaced by a new one with the same ``transactional_id``: its
initialization fences the old producer and aborts the old one's open transaction (and the
transaction coordinator aborts it anyway after the transaction timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from api.producers import Record, TransactionalProducer, send_all, sender_task
from app.errors import Unavailable
from app.kafka.partitioner import KeyPartitioner
from app.observability import metrics

log = logging.getLogger(__name__)

NOT_ACCEPTED = "the event broker is unavailable; the event was not accepted, retry later"
RETRY_START_SECONDS = 1.0


_QUEUED, _SENDING, _COMMITTING = 0, 1, 2


@dataclass(eq=False, slots=True)
class _Publish:
    """One request's records (one for a publish, all of a batch): in one transaction, answered together."""

    records: tuple[Record, ...]
    queued: float  # loop time
    deadline: float
    future: asyncio.Future[None]
    stage: int = _QUEUED
    gave_up: bool = False  # answered 503 (or its request went away) before its transaction's commit


def _sender_dead(producer: TransactionalProducer) -> bool:
    task = sender_task(producer)
    return task is not None and task.done()


@dataclass
class _Lane:
    """One transactional producer and the task that runs its transactions, one at a time."""

    index: int
    producer: TransactionalProducer
    task: asyncio.Task[None] | None = None


@dataclass
class TransactionalPublisher:
    make_producer: Callable[[int], TransactionalProducer]  # lane index → producer (its own transactional id)
    timeout: float
    max_records: int = 1000
    lanes: int = 1
    window: float = 0.0  # seconds a group collects publishes from its oldest one's arrival
    transactions: int = 0  # committed
    aborted: int = 0
    _lanes: list[_Lane] = field(default_factory=list)
    _queue: deque[_Publish] = field(default_factory=deque)
    _queued_records: int = 0
    _closed: float = float("-inf")  # loop time the last group was taken
    _wake: asyncio.Event = field(default_factory=asyncio.Event)  # something queued (or stopping)
    _full: asyncio.Event = field(default_factory=asyncio.Event)  # max_records queued (or stopping)
    _collecting: asyncio.Lock = field(default_factory=asyncio.Lock)  # one lane collects at a time
    _retired: set[asyncio.Task[None]] = field(default_factory=set)
    _partitioner: KeyPartitioner = field(default_factory=KeyPartitioner)
    _stopping: bool = False

    async def start(self) -> None:
        """Start the producers (each transactional id fences a previous instance) and their tasks."""
        try:
            for index in range(self.lanes):
                producer = self.make_producer(index)
                try:
                    await producer.start()
                except BaseException:
                    await producer.stop()
                    raise
                self._lanes.append(_Lane(index, producer))
        except BaseException:
            for lane in self._lanes:
                await lane.producer.stop()
            self._lanes.clear()
            raise
        for lane in self._lanes:
            lane.task = asyncio.create_task(self._run(lane), name=f"publish-transactions-{lane.index}")

    @property
    def producers(self) -> list[TransactionalProducer]:
        return [lane.producer for lane in self._lanes]

    async def stop(self) -> None:
        """Let the transaction in progress end (at most twice the timeout; one still open then is
        aborted by the coordinator), refuse what is queued, stop the producer."""
        self._stopping = True
        self._wake.set()
        self._full.set()
        tasks = [lane.task for lane in self._lanes if lane.task is not None]
        if tasks:
            try:
                async with asyncio.timeout(2 * self.timeout):
                    await asyncio.shield(asyncio.gather(*tasks, return_exceptions=True))
            except TimeoutError:
                log.warning("a publish transaction was still in progress at shutdown; left to the coordinator")
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        while self._queue:
            self._refuse_one(self._queue.popleft())
        self._queued_records = 0
        for lane in self._lanes:
            await lane.producer.stop()
        if self._retired:
            await asyncio.gather(*self._retired, return_exceptions=True)

    async def publish(self, topic: str, key: bytes, value: bytes, timestamp_ms: int) -> None:
        """Return once the record is committed; raise :class:`Unavailable` when it never will be."""
        await self.publish_batch((Record(topic, key, value, timestamp_ms),))

    async def publish_batch(self, records: tuple[Record, ...]) -> None:
        """Return once all ``records`` are committed, in one transaction; raise :class:`Unavailable`
        when none of them ever will be."""
        if not records:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        item = _Publish(records, now, now + self.timeout, loop.create_future())
        self._queue.append(item)
        self._queued_records += len(records)
        self._wake.set()
        if self._queued_records >= self.max_records:
            self._full.set()
        try:
            async with asyncio.timeout_at(item.deadline):
                await asyncio.shield(item.future)
            return
        except TimeoutError:
            if item.stage != _COMMITTING:
                item.gave_up = True  # its transaction will not be committed
                raise Unavailable(NOT_ACCEPTED) from None
        except asyncio.CancelledError:  # the request went away: nobody reads the outcome
            if item.stage != _COMMITTING:
                item.gave_up = True
            else:
                item.future.add_done_callback(_outcome_unread)
            raise
        await item.future  # the commit was asked for: its outcome decides, however long it takes

    async def _run(self, lane: _Lane) -> None:
        while not self._stopping:
            async with self._collecting:
                group = await self._collect()
            if group:
                await self._transact(lane, group)

    async def _collect(self) -> list[_Publish]:
        """Wait for a publish, then until ``window`` seconds after the oldest queued one arrived
        (or ``max_records`` are queued); take what is queued, up to ``max_records``."""
        while not self._queue and not self._stopping:
            self._wake.clear()
            await self._wake.wait()
        if self._stopping:
            return []
        loop = asyncio.get_running_loop()
        # at most one transaction begins per window, whatever the lanes: under a load that keeps every
        # lane busy, a freed lane would otherwise take whatever queued meanwhile, a small group
        closes = max(self._queue[0].queued, self._closed) + self.window
        while self._queued_records < self.max_records and not self._stopping and loop.time() < closes:
            self._full.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(closes):
                    await self._full.wait()
        group: list[_Publish] = []
        size = 0
        now = self._closed = loop.time()
        while self._queue:
            item = self._queue[0]
            if group and size + len(item.records) > self.max_records:
                break  # a batch is never split: it waits for the next transaction (or fills one alone)
            self._queue.popleft()
            self._queued_records -= len(item.records)
            if not item.gave_up and item.deadline > now:  # one past it gives up: it would abort the group
                group.append(item)
                size += len(item.records)
        return group

    async def _transact(self, lane: _Lane, group: list[_Publish]) -> None:
        producer = lane.producer
        for item in group:
            item.stage = _SENDING
        began = False
        records = [record for item in group for record in item.records]
        try:
            async with asyncio.timeout_at(min(item.deadline for item in group)):
                partitions = await self._partitions(producer, records)
                await producer.begin_transaction()
                began = True
                await asyncio.gather(*await send_all(producer, records, partitions))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure before the commit: the group is not accepted
            self._refuse(group)
            await self._abort(lane, began, exc)
            return
        if any(item.gave_up for item in group):  # a deadline passed during the last send: abort
            self._refuse(group)
            await self._abort(lane, began, TimeoutError("a publish of the transaction gave up"))
            return
        # No await between the check above and this: no publish of the group can give up any more.
        for item in group:
            item.stage = _COMMITTING
        try:
            await producer.commit_transaction()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the coordinator refused the commit: it aborts the transaction
            log.error("the coordinator refused to commit a transaction of %d records (%r): 503", len(records), exc)
            metrics.PUBLISH_TRANSACTIONS.labels("commit_refused").inc()
            self.aborted += 1
            self._refuse(group)
            await self._replace(lane)
            return
        self.transactions += 1
        metrics.PUBLISH_TRANSACTIONS.labels("committed").inc()
        for item in group:
            if not item.future.done():
                item.future.set_result(None)

    async def _partitions(self, producer: TransactionalProducer, records: list[Record]) -> list[int]:
        """Each record's partition, by its key (app/kafka/partitioner.py)."""
        partitions: dict[str, list[int]] = {}
        for topic in {record.topic for record in records}:
            partitions[topic] = sorted(await producer.partitions_for(topic))
        return [self._partitioner(r.key, partitions[r.topic], partitions[r.topic]) for r in records]

    def _refuse(self, group: list[_Publish]) -> None:
        for item in group:
            self._refuse_one(item)

    @staticmethod
    def _refuse_one(item: _Publish) -> None:
        if item.future.done():
            return
        if item.gave_up:
            item.future.cancel()  # nobody waits for it any more
        else:
            item.future.set_exception(Unavailable(NOT_ACCEPTED))

    async def _abort(self, lane: _Lane, began: bool, cause: BaseException) -> None:
        """End the failed transaction (nothing of it is ever committed: the commit is never asked for);
        replace the producer when it cannot do so in time or is broken."""
        self.aborted += 1
        metrics.PUBLISH_TRANSACTIONS.labels("aborted").inc()
        log.warning("publish transaction not committed (%r); its publishes were answered 503", cause)
        if not began:
            if _sender_dead(lane.producer):
                await self._replace(lane)
            return
        try:
            async with asyncio.timeout(self.timeout):
                await lane.producer.abort_transaction()
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a new producer with the same id aborts it instead
            log.warning("could not abort the publish transaction (%r); replacing the producer", exc)
        await self._replace(lane)

    async def _replace(self, lane: _Lane) -> None:
        """A new producer with the same transactional id; tried until one starts (the other lanes
        go on; publishes queued meanwhile give up at their deadline)."""
        self._retire(lane.producer)
        while True:
            fresh = self.make_producer(lane.index)
            try:
                async with asyncio.timeout(self.timeout):
                    await fresh.start()
            except asyncio.CancelledError:
                self._retire(fresh)
                raise
            except Exception as exc:  # noqa: BLE001 - the broker is unreachable: try again
                log.warning("could not start a new transactional producer yet (%r)", exc)
                self._retire(fresh)
                await asyncio.sleep(RETRY_START_SECONDS)
                continue
            lane.producer = fresh
            log.warning("replaced the transactional producer of lane %d", lane.index)
            return

    def _retire(self, producer: TransactionalProducer) -> None:
        task = asyncio.create_task(_stop_quietly(producer))
        self._retired.add(task)
        task.add_done_callback(self._retired.discard)


def _outcome_unread(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.info("a publish whose request went away was not committed: %r", future.exception())


async def _stop_quietly(producer: TransactionalProducer) -> None:
    try:
        await producer.stop()
    except Exception as exc:  # noqa: BLE001 - a retired producer: its failure changes nothing
        log.warning("a retired transactional producer failed to stop cleanly: %r", exc)
