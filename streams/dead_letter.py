"""Records an agent cannot process go to the dead-letter topic with the reason."""

from __future__ import annotations

import logging
from typing import Any

from app.kafka.app import dead_letter_topic
from app.kafka.records import encode
from app.observability import metrics

log = logging.getLogger(__name__)


def dead_letter_value(stage: str, topic: str, partition: int, offset: int, value: Any, reason: str) -> bytes:
    """The dead-letter record of a source record that cannot be processed (counted and logged)."""
    metrics.DEAD_LETTERS.labels(stage).inc()
    log.warning("dead-letter stage=%s topic=%s offset=%s reason=%s", stage, topic, offset, reason)
    raw = value if isinstance(value, bytes) else b""
    return encode(
        {
            "stage": stage,
            "reason": reason,
            "topic": topic,
            "partition": partition,
            "offset": offset,
            "value": raw.decode("utf-8", "replace")[:65536],
        }
    )


def unreadable_state_value(table: str, key: bytes, raw: bytes, partition: int, offset: int, reason: str) -> bytes:
    """The dead-letter record of a stored state that cannot be read (counted, logged at ERROR)."""
    metrics.UNREADABLE_STATES.labels(table).inc()
    metrics.DEAD_LETTERS.labels(f"{table}-state").inc()
    log.error(
        "unreadable %s state for key %r (partition %s), dead-lettered; the key starts from empty state: %s",
        table,
        key.decode("utf-8", "replace"),
        partition,
        reason,
    )
    return encode(
        {
            "stage": f"{table}-state",
            "reason": reason,
            "table": table,
            "key": key.decode("utf-8", "replace"),
            "partition": partition,
            "offset": offset,
            "value": raw.decode("utf-8", "replace")[:65536],
        }
    )


async def send_dead_letter(stage: str, event: Any, reason: str) -> None:
    message = event.message
    value = dead_letter_value(stage, message.topic, message.partition, message.offset, event.value, reason)
    # awaited until the broker has it (Faust's send only queues): the record is acknowledged after this
    await (await dead_letter_topic.send(key=event.key, value=value))
