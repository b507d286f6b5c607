"""The replica's producer takes a burst of publishes for one partition without making any of them
wait for an earlier batch's acknowledgement.

aiokafka keeps one open batch per partition while the previous one is in flight; a record that
does not fit waits until that batch is acknowledged (``MessageBatch.wait_drain``). At its default
size (16 KiB, about 50 publish records, fewer with a trace header) a burst of publishes waited so;
api/state.py gives it PRODUCER_BATCH_BYTES.
"""

from __future__ import annotations

import asyncio

import pytest

from api.state import new_producer
from app.kafka.topics import PUBLISH
from app.settings import Settings

pytestmark = pytest.mark.kafka

RECORD = b"x" * 300  # about a publish record's value
HEADERS = [("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")]


async def test_a_burst_for_one_partition_is_queued_without_waiting_for_acknowledgements(
    fresh_topics: Settings,
) -> None:
    settings = fresh_topics
    topic = settings.topic(PUBLISH)
    producer = new_producer(settings)
    await producer.start()
    try:
        async with asyncio.timeout(30):  # the topic's metadata, so that no send below waits for it
            await (await producer.send(topic, RECORD, key=b"k", partition=0))
        sent = []
        for i in range(400):  # about 150 KB: more than nine 16 KiB batches
            sent.append(await producer.send(topic, RECORD, key=b"k%d" % i, partition=0, headers=HEADERS))
        # No send gave the event loop a turn (the sender never ran): none is acknowledged yet. A send
        # that waited for a full batch to drain would have let the first ones be acknowledged.
        assert not any(future.done() for future in sent)
        async with asyncio.timeout(30):
            offsets = [metadata.offset for metadata in await asyncio.gather(*sent)]
        assert offsets == list(range(offsets[0], offsets[0] + len(sent)))
    finally:
        await producer.stop()
