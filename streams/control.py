"""Control agent: decode a publish, apply the event-control policy, then run the workflow stage."""

from __future__ import annotations

import logging
from typing import Any

from app.domain.control import PolicyType, decide_bypass
from app.faust_app import app, publish_topic
from app.records import decode
from streams.dead_letter import send_dead_letter
from streams.workflow import run_workflows

log = logging.getLogger(__name__)


@app.agent(publish_topic)
async def control(stream: Any) -> None:
    async for event in stream.events():
        try:
            record = decode(event.value)
            event_id = record["id"]
        except (ValueError, KeyError) as exc:
            await send_dead_letter("control", event, f"undecodable publish record: {exc}")
            continue
        decision = decide_bypass()
        record["control"] = {"policy": PolicyType.BYPASS.value, "decision": decision.value}
        record["decision"] = decision.value
        await run_workflows(event, record)
        log.debug("control event=%s decision=%s", event_id, decision.value)
