"""Records an agent cannot process go to the dead-letter topic with the reason."""

from __future__ import annotations

import logging
from typing import Any

from app import metrics
from app.faust_app import dead_letter_topic
from app.records import encode

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
