"""The Kafka producer as the API's publisher writes through it: the :class:`TransactionalProducer`
Protocol (aiokafka's producer; a fake in the unit tests), the :class:`Record` a publish becomes, the
records sent as one batch per partition, and the producer's sender task (dead: replace it)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol


class TransactionalProducer(Protocol):
    """What the publisher uses of ``aiokafka.AIOKafkaProducer`` (a fake in the unit tests)."""

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def partitions_for(self, topic: str) -> Any: ...
    async def begin_transaction(self) -> None: ...
    async def commit_transaction(self) -> None: ...
    async def abort_transaction(self) -> None: ...
    def create_batch(self) -> Any: ...  # a BatchBuilder: append(key=, value=, timestamp=, headers=) → None when full
    async def send_batch(self, batch: Any, topic: str, *, partition: int) -> Any: ...


@dataclass(frozen=True, slots=True)
class Record:
    """One record to write: topic (full name), key, value, timestamp."""

    topic: str
    key: bytes
    value: bytes
    timestamp_ms: int
    # the publish span's traceparent (tracing on), which the request's records carry
    # (api/publishing.py publish_records)
    headers: tuple[tuple[str, bytes], ...] = ()


def sender_task(producer: object) -> asyncio.Task[None] | None:
    """The task of an aiokafka producer's sender (None: not started). aiokafka ends it after some
    broker failures and never restarts it: the producer is dead then. Read through ``getattr``, the
    one place the API reaches into aiokafka (its producer is the API's own, not Faust's: ``tables/``,
    where every other aiokafka internal is, is out of the API's reach)."""
    task: asyncio.Task[None] | None = getattr(getattr(producer, "_sender", None), "sender_task", None)
    return task


async def send_all(producer: TransactionalProducer, records: list[Record], partitions: list[int]) -> list[Any]:
    """Send the records, in order, as one record batch per partition (more when one fills up:
    PRODUCER_BATCH_BYTES, api/state.py); the futures of their acknowledgements.

    A record appended to aiokafka's batch builder costs about a microsecond, against some 20 for a
    ``send`` of its own (serializers, partitioner, a coroutine per record): the CPU a batch publish
    of 1,000 records spends in the producer."""
    sends: list[Any] = []
    builders: dict[tuple[str, int], Any] = {}
    for record, partition in zip(records, partitions, strict=True):
        where = (record.topic, partition)
        builder = builders.get(where)
        if builder is None:
            builder = builders[where] = producer.create_batch()
        fields = {"key": record.key, "value": record.value, "timestamp": record.timestamp_ms}
        record_headers = list(record.headers)
        if builder.append(**fields, headers=record_headers) is None:  # full: send it, start another
            sends.append(await producer.send_batch(builder, record.topic, partition=partition))
            builder = builders[where] = producer.create_batch()
            builder.append(**fields, headers=record_headers)  # an empty batch takes any record
    for (topic, partition), builder in builders.items():
        sends.append(await producer.send_batch(builder, topic, partition=partition))
    return sends
