"""State changes sent to a changelog topic as whole producer batches (aiokafka's ``create_batch`` /
``send_batch``: one produce per partition and batch instead of one ``send`` per key), awaited until
the broker has every record. Used by a stage's checkpoint (tables/batch_stage.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from aiokafka import AIOKafkaProducer


async def send_changelog(
    producer: AIOKafkaProducer, changelog: str, records: Mapping[int, Iterable[tuple[bytes, bytes | None]]]
) -> dict[int, int]:
    """Send ``records`` (by partition, in order) and wait for the broker; the offset of the last
    record of each partition."""
    sent: list[tuple[int, int, Any]] = []  # (partition, records in the batch, delivery future)
    for partition, pairs in records.items():
        batch, count = producer.create_batch(), 0
        for key, value in pairs:
            if batch.append(key=key, value=value, timestamp=None) is None:  # full: send it, start another
                if count:
                    sent.append((partition, count, await producer.send_batch(batch, changelog, partition=partition)))
                    batch, count = producer.create_batch(), 0
                if count or batch.append(key=key, value=value, timestamp=None) is None:
                    raise ValueError(f"a state of {len(value or b'')} bytes does not fit in a producer batch")
            count += 1
        if count:
            sent.append((partition, count, await producer.send_batch(batch, changelog, partition=partition)))
    metas = await asyncio.gather(*(future for _p, _n, future in sent))
    last: dict[int, int] = {}
    for (partition, count, _future), meta in zip(sent, metas, strict=True):
        last[partition] = max(last.get(partition, -1), meta.offset + count - 1)
    return last
