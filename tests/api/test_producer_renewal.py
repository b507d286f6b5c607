"""A replica whose Kafka producer stopped sending replaces it instead of answering 503 forever.

aiokafka's idempotent producer ends its sender task on ``OutOfOrderSequenceNumber`` (the broker
restarted with batches in flight: tests/e2e/test_faults.py) and then fails every send at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka.errors import KafkaTimeoutError, OutOfOrderSequenceNumber

from api.state import ApiState, new_producer
from app.kafka.topics import PUBLISH
from app.settings import Settings

pytestmark = pytest.mark.kafka


def _state(settings: Settings, producer: Any) -> ApiState:
    # only the producer and the settings take part in renewing
    return ApiState(
        settings=settings,
        engine=None,  # type: ignore[arg-type]
        sessions=None,  # type: ignore[arg-type]
        producer=producer,
        publisher=None,  # type: ignore[arg-type]
        principals=None,  # type: ignore[arg-type]
        topics=None,  # type: ignore[arg-type]
        federation=None,  # type: ignore[arg-type]
    )


async def test_a_producer_whose_sender_died_is_replaced_and_sends(fresh_topics: Settings) -> None:
    settings = fresh_topics
    topic = settings.topic(PUBLISH)
    first = new_producer(settings)
    await first.start()
    state = _state(settings, first)
    try:
        await state.renew_producer_if_dead(first, KafkaTimeoutError())
        assert state.producer is first, "a working producer is kept after a timeout"

        first._sender.sender_task.cancel()  # what an OutOfOrderSequenceNumber leaves: a finished sender
        with pytest.raises(TimeoutError):  # nothing sends the record any more
            async with asyncio.timeout(2):
                await (await first.send(topic, b"lost"))
        await state.renew_producer_if_dead(first, KafkaTimeoutError())
        assert state.producer is not first, "the dead producer was replaced"
        async with asyncio.timeout(30):
            metadata = await (await state.producer.send(topic, b"sent"))
        assert metadata.offset >= 0

        renewed = state.producer
        await state.renew_producer_if_dead(first, KafkaTimeoutError())
        assert state.producer is renewed, "renewed once: a failure on the replaced producer changes nothing"

        # The other way aiokafka leaves a producer broken: the sender lives on, but the broker
        # refuses its sequence numbers (OutOfOrderSequenceNumber) on every send.
        await state.renew_producer_if_dead(renewed, OutOfOrderSequenceNumber())
        assert state.producer is not renewed, "a producer whose sequence the broker refuses is replaced"
        async with asyncio.timeout(30):
            assert (await (await state.producer.send(topic, b"again"))).offset >= 0
    finally:
        for task in state.tasks:
            await task
        await state.producer.stop()
