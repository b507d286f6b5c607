"""Retry scheduler: moves a waiting delivery from its delay-level topic back to its action topic
once it is due, without a sleeping consumer: a partition whose head record is not due yet is
paused (and rewound to that record) until then, while every other partition keeps flowing.

Records of one level were parked with about the same wait, so they are in due order within a
partition (app/domain/retry_schedule.py ``delay_levels`` bounds how late one can be). A plain aiokafka
consumer in its own group (``<worker id>.retry``), offsets committed only after the forwarded
records were acknowledged: a crash forwards a record twice at worst, and the delivery agent
drops the second (same effect id and attempt).
"""

from __future__ import annotations

import asyncio
import logging
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from app.kafka.records import decode
from app.kafka.security import client_args
from app.kafka.topics import ACTIONS, retry_topics
from app.settings import Settings

log = logging.getLogger(__name__)


class RetryScheduler:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.paused: dict[TopicPartition, float] = {}  # partition → when its head record is due

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
            while True:
                await self.step(consumer, producer)
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

    @staticmethod
    def _due(record: ConsumerRecord[bytes, bytes]) -> float:
        try:
            return int(decode(record.value)["due_ms"]) / 1000
        except (ValueError, KeyError, TypeError):
            return 0.0  # undecodable: forwarded now, and the delivery agent dead-letters it

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
