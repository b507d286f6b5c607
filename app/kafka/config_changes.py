"""The ``config-changes`` topic: announcing a change of an organization's configuration, and
following the announcements.

Every process (API replica, worker) reads the compacted topic with its own group-less consumer, so
a change made through any replica drops the cached entries of that organization everywhere (each
process's :class:`app.caches.TTLCache` ``invalidate_org``); the TTL bounds staleness if a change
record is missed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from app.kafka.records import encode
from app.kafka.security import client_args
from app.kafka.topics import CONFIG_CHANGES
from app.settings import Settings

log = logging.getLogger(__name__)


async def announce_change(producer: AIOKafkaProducer, settings: Settings, org_id: str, what: str) -> None:
    """Tell every process that configuration of ``org_id`` changed."""
    await producer.send_and_wait(
        settings.topic(CONFIG_CHANGES), key=org_id.encode(), value=encode({"org": org_id, "what": what})
    )


async def follow_changes(
    settings: Settings, on_change: Callable[[str], None], ready: asyncio.Event | None = None
) -> None:
    """Consume config changes from the end of the topic forever, calling ``on_change(org_id)``."""
    consumer = AIOKafkaConsumer(**client_args(settings), group_id=None, enable_auto_commit=False)
    try:  # stopped even when its start is cancelled: aiokafka logs an unclosed one as an ERROR
        await consumer.start()
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
