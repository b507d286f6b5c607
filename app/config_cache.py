"""A small TTL cache of configuration, invalidated by the ``config-changes`` topic.

Every process (API replica, worker) reads the compacted ``config-changes`` topic with its
own group-less consumer, so a change made through any replica drops the cached entries
of that organization everywhere; the TTL bounds staleness if a change record is missed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from app.records import encode
from app.settings import Settings
from app.topics import CONFIG_CHANGES

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TTLCache(Generic[K, V]):
    """Values by key for ``ttl`` seconds; entries are grouped by organization for invalidation."""

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._items: dict[K, tuple[float, str, V]] = {}

    def get(self, key: K) -> V | None:
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] <= self._clock():
            del self._items[key]
            return None
        return item[2]

    def put(self, key: K, org_id: str, value: V) -> None:
        if len(self._items) > 100_000:
            self._items.clear()
        self._items[key] = (self._clock() + self._ttl, org_id, value)

    async def get_or_load(self, key: K, org_id: str, load: Callable[[], Awaitable[V]]) -> V:
        value = self.get(key)
        if value is None:
            value = await load()
            self.put(key, org_id, value)
        return value

    def invalidate_org(self, org_id: str) -> None:
        for key in [k for k, v in self._items.items() if v[1] == org_id]:
            self._items.pop(key, None)

    def clear(self) -> None:
        self._items.clear()


async def announce_change(producer: AIOKafkaProducer, settings: Settings, org_id: str, what: str) -> None:
    """Tell every process that configuration of ``org_id`` changed."""
    await producer.send_and_wait(
        settings.topic(CONFIG_CHANGES), key=org_id.encode(), value=encode({"org": org_id, "what": what})
    )


async def follow_changes(
    settings: Settings, on_change: Callable[[str], None], ready: asyncio.Event | None = None
) -> None:
    """Consume config changes from the end of the topic forever, calling ``on_change(org_id)``."""
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        topic = settings.topic(CONFIG_CHANGES)
        partitions = consumer.partitions_for_topic(topic) or {0}
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        await consumer.seek_to_end(*tps)
        if ready is not None:
            ready.set()
        async for message in consumer:
            if message.key:
                on_change(message.key.decode())
    finally:
        await consumer.stop()
