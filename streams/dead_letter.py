"""Records an agent cannot process go to the dead-letter topic with the reason."""

from __future__ import annotations

import logging
from typing import Any

from app.kafka.app import dead_letter_topic
from app.kafka.records import encode
from app.observability import metrics

log = logging.getLogger(__name__)


async def send_dead_letter(stage: str, event: Any, reason: str) -> None:
    message = event.message
    metrics.DEAD_LETTERS.labels(stage).inc()
    log.warning("dead-letter stage=%s topic=%s offset=%s reason=%s", stage, message.topic, message.offset, reason)
    raw = event.value if isinstance(event.value, bytes) else b""
    await dead_letter_topic.send(
        key=event.key,
        value=encode(
            {
                "stage": stage,
                "reason": reason,
                "topic": message.topic,
                "partition": message.partition,
                "offset": message.offset,
                "value": raw.decode("utf-8", "replace")[:65536],
            }
        ),
    )


async def send_unreadable_state(table: str, event: Any, key: bytes, raw: bytes, reason: str) -> None:
    """A stored state that cannot be read: to the dead-letter topic with the reason and the raw
    value (an operator can restore it), counted and logged at ERROR. The caller goes on from an
    empty state for the key, so the event is still decided (a NOTIFY may repeat: said loudly)."""
    metrics.UNREADABLE_STATES.labels(table).inc()
    metrics.DEAD_LETTERS.labels(f"{table}-state").inc()
    log.error(
        "unreadable %s state for key %r (partition %s), dead-lettered; the key starts from empty state: %s",
        table,
        key.decode("utf-8", "replace"),
        event.message.partition,
        reason,
    )
    await dead_letter_topic.send(
        key=key,
        value=encode(
            {
                "stage": f"{table}-state",
                "reason": reason,
                "table": table,
                "key": key.decode("utf-8", "replace"),
                "partition": event.message.partition,
                "offset": event.message.offset,
                "value": raw.decode("utf-8", "replace")[:65536],
            }
        ),
    )
