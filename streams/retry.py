"""Retry scheduler: moves a waiting delivery from its delay-level topic back to its action topic
once it is due, without a sleeping consumer: a partition whose head record is not due yet is
paused (and rewound to that record) until then, while every other partition keeps flowing.

Records of one level were parked with about the same wait, so they are in due order within a
partition (app/domain/shared/retry_schedule.py ``delay_levels`` bounds how late one can be). A plain aiokafka
consumer in its own group (``<worker id>.retry``), offsets committed only after the forwarded
records were acknowledged: a crash forwards a record twice at worst, and the delivery stage
drops the second (same effect id and attempt).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from app.kafka.records import decode
from app.kafka.security import client_args
from app.kafka.topics import ACTIONS, retry_topics
from app.settings import Settings
from streams.tail_watch import CHECK_EVERY_S, TailWatch, Watched

log = logging.getLogger(__name__)


class RetryTailView:
    """streams.tail_watch.TailView on the scheduler's consumer: a partition paused until its head
    record is due is not behind, and nothing is in flight between two steps."""

    def __init__(self, scheduler: RetryScheduler, consumer: AIOKafkaConsumer) -> None:
        self.scheduler, self.consumer = scheduler, consumer

    def generation(self) -> int:
        return hash(frozenset(self.consumer.assignment()))

    def recovering(self) -> bool:
        return False

    def held(self, topic: str) -> list[int]:
        paused = self.scheduler.paused
        return sorted(tp.partition for tp in self.consumer.assignment() if tp.topic == topic and tp not in paused)

    async def stable_ends(self, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
        ends = await self.consumer.end_offsets([TopicPartition(t, p) for t, p in tps])
        return {(tp.topic, tp.partition): offset for tp, offset in ends.items()}

    def in_flight(self, topic: str, partition: int) -> bool:
        return False

    def non_records(self, topic: str, partition: int, start: int, end: int) -> bool:
        return False  # written without transactions: every offset holds a record

    def describe(self, topic: str, partition: int) -> str:
        return f"committed {self.scheduler.committed.get(TopicPartition(topic, partition))}"

    async def seek(self, topic: str, partition: int, offset: int) -> bool:
        tp = TopicPartition(topic, partition)
        if tp not in self.consumer.assignment():
            return False
        self.consumer.seek(tp, offset)
        return True

    def watch(self, topics: list[str]) -> TailWatch:
        async def applied(topic: str, partition: int) -> int | None:
            tp = TopicPartition(topic, partition)
            if tp not in self.scheduler.committed:
                committed = await self.consumer.committed(tp)
                if committed is None:
                    return None  # nothing forwarded yet: aiokafka starts from the earliest record
                self.scheduler.committed[tp] = committed
            return self.scheduler.committed[tp]

        def watched(topic: str) -> Watched:
            return Watched("retries", topic, lambda partition: applied(topic, partition))

        return TailWatch(self, [watched(topic) for topic in topics])


class RetryScheduler:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.paused: dict[TopicPartition, float] = {}  # partition → when its head record is due
        self.committed: dict[TopicPartition, int] = {}  # partition → the offset last committed here

    async def run(self) -> None:
        s = self.settings
        topics = [s.topic(t) for t in retry_topics(s)]
        producer = AIOKafkaProducer(**client_args(s), acks="all", enable_idempotence=True)
        try:  # stopped even when its start is cancelled, as the consumer below
            await producer.start()
            await self._consume(topics, producer)
        finally:
            await producer.stop()

    async def _consume(self, topics: list[str], producer: AIOKafkaProducer) -> None:
        s = self.settings
        consumer = AIOKafkaConsumer(
            *topics,
            **client_args(s),
            group_id=f"{s.worker_id}.retry",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=10_000,
            fetch_max_wait_ms=100,  # a resumed partition's records come back within this, not 500 ms
            heartbeat_interval_ms=2_000,
        )
        # stopped even when its start is cancelled (a worker stopped while starting): a consumer left
        # unclosed is reported by aiokafka as the ERROR "Unclosed AIOKafkaConsumer" when collected
        try:
            await consumer.start()
            watch, checked = RetryTailView(self, consumer).watch(topics), time.monotonic()
            while True:
                await self.step(consumer, producer)
                if time.monotonic() - checked >= CHECK_EVERY_S:
                    await watch.check()
                    checked = time.monotonic()
        finally:
            await consumer.stop()

    async def step(self, consumer: AIOKafkaConsumer, producer: AIOKafkaProducer) -> None:
        now = time.time()
        assigned = consumer.assignment()
        for tp, due in list(self.paused.items()):
            if tp not in assigned:
                del self.paused[tp]  # moved to another worker: it rewinds from the committed offset
            elif due <= now:
                consumer.resume(tp)
                del self.paused[tp]
        batches = await consumer.getmany(timeout_ms=200, max_records=500)
        pending, commits = [], {}
        for tp, records in batches.items():
            for record in records:
                due = self._due(record)
                if due > time.time():
                    consumer.pause(tp)
                    consumer.seek(tp, record.offset)
                    self.paused[tp] = due
                    break
                target = self._target(record)
                if target is not None:
                    pending.append(await producer.send(target, value=record.value, key=record.key))
                commits[tp] = record.offset + 1
        if pending:
            await asyncio.gather(*pending)
        if commits:
            await consumer.commit(commits)
            self.committed.update(commits)

    @staticmethod
    def _due(record: ConsumerRecord[bytes, bytes]) -> float:
        try:
            return int(decode(record.value)["due_ms"]) / 1000
        except (ValueError, KeyError, TypeError):
            return 0.0  # undecodable: forwarded now, and the delivery stage dead-letters it

    def _target(self, record: ConsumerRecord[bytes, bytes]) -> str | None:
        try:
            kind = str(decode(record.value).get("kind") or "")
        except ValueError:
            kind = ""
        name = ACTIONS.get(kind)
        if name is None:
            log.error("retry: record at %s:%s has no known kind; dropped", record.topic, record.offset)
            return None
        return self.settings.topic(name)
