"""Push executor: the notification mapped to APNs and FCM payloads (app/domain/delivery/push.py), handed
to a provider. The default provider is an outbox that records what would be sent (readable at
``GET .../push_notifications``); APNs / FCM adapters implement the same ``send``."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from app.domain.delivery.delivery_verdicts import Attempt
from app.domain.delivery.kinds import PUSH
from app.domain.delivery.push import apns_request, expired, fcm_payload, push_content, remaining_ttl
from app.domain.shared.milliseconds import to_ms


def push_record(item: dict[str, Any]) -> dict[str, Any]:
    """The publish record as the push mapping reads it, from a delivery item."""
    content = item["content"]
    return {
        "id": item["event_id"],
        "status": item["mode"],
        "accepted_ms": item["accepted_ms"],
        "event": content.get("event") or {},
        "notification": content.get("notification"),
        "data": content.get("data") or {},
    }


class OutboxPushExecutor:
    kind = PUSH.name

    async def send(self, item: dict[str, Any], secret: str | None) -> Attempt:
        content = item["content"]
        c = push_content(push_record(item), str(content.get("topic_name") or ""), item["decision"])
        now = time.time()
        accepted_ms, now_ms = int(item["accepted_ms"]), to_ms(now)
        if expired(accepted_ms, c.time_to_live, now_ms):
            return Attempt(error="time_to_live passed before it could be sent", expired=True)
        # The providers count a TTL from when they get it: hand them what is left (a retry comes later).
        c = replace(c, time_to_live=remaining_ttl(accepted_ms, c.time_to_live, now_ms))
        row = {
            "id": item["effect_id"],
            "organization_id": item["organization_id"],
            "event_id": item["event_id"],
            "workflow_id": item["workflow_id"],
            "mode": item["mode"],
            "user_ids": list(content.get("user_ids") or []),
            "group_ids": list(content.get("group_ids") or []),
            "title": c.title,
            "body": c.body,
            "apns": apns_request(c, now),
            "fcm": fcm_payload(c, now),
        }
        return Attempt(status_code=200, record=row)

    async def aclose(self) -> None:
        return None
