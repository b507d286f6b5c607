"""PagerDuty Events API v2: ``POST /v2/enqueue``, so a tool that sends to PagerDuty sends to Tocsin
by changing its base URL.

No bearer token: the event's ``routing_key`` is an integration key bound to one workflow topic
(api/routes/integration_keys.py). The event becomes one native publish request
(app/domain/formats/pagerduty.py), checked, rate-limited and written exactly as a native publish.
Every answer is Events v2's: ``202 {"status": "success", "message": "Event processed", "dedup_key"}``
(plus ``event_id``, the server's event id, for ``GET …/events/{id}``); a bad event, an oversized body
or an unknown, revoked or malformed routing key ``400 {"status": "invalid event", "message",
"errors": [...]}`` with nothing stored; ``429`` throttled; ``503`` when nothing could be stored.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import ValidationError

from api.body import receive_body
from api.deps import get_state
from api.errors import OWN_ERRORS, describe
from api.publishing import produce, publish_records, scope_request_id
from api.responses import json_response
from api.state import TopicRef
from app.clock import now_ms
from app.domain.events.control import policy_type
from app.domain.events.publish_check import check_publish
from app.domain.formats import pagerduty as pd
from app.domain.shared.ids import new_id
from app.errors import BodyTooLarge, InvalidInput, RateLimited
from app.store.integration_keys import find_key

router = APIRouter(tags=["publish"])

INVALID_ROUTING_KEY = "Invalid routing key"
_EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["routing_key", "event_action"],
    "properties": {
        "routing_key": {"type": "string", "description": "an integration key of the topic (tpk_…)"},
        "event_action": {"enum": list(pd.ACTIONS)},
        "dedup_key": {"type": "string", "maxLength": pd.MAX_DEDUP_KEY_CHARS},
        "payload": {
            "type": "object",
            "required": ["summary", "source", "severity"],
            "properties": {
                "summary": {"type": "string"},
                "source": {"type": "string"},
                "severity": {"enum": list(pd.SEVERITIES)},
                "timestamp": {"type": "string"},
                "component": {"type": "string"},
                "group": {"type": "string"},
                "class": {"type": "string"},
                "custom_details": {},
            },
        },
        "links": {"type": "array", "items": {"type": "object"}},
        "images": {"type": "array", "items": {"type": "object"}},
        "client": {"type": "string"},
        "client_url": {"type": "string"},
    },
}
_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["status", "message"],
    "properties": {
        "status": {"type": "string"},
        "message": {"type": "string"},
        "dedup_key": {"type": "string"},
        "event_id": {"type": "string", "description": "the server's event id (GET …/events/{id})"},
        "errors": {"type": "array", "items": {"type": "string"}},
    },
}


def _answer(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ANSWER_SCHEMA}}}


@router.post(
    "/v2/enqueue",
    status_code=202,
    openapi_extra={
        "security": [],
        OWN_ERRORS: True,
        "requestBody": {
            "required": True,
            "description": "An Events API v2 event (docs/api.md, PagerDuty Events API v2)",
            "content": {"application/json": {"schema": _EVENT_SCHEMA}},
        },
    },
    responses={
        202: _answer("Event processed: its record is stored"),
        400: _answer("invalid event, or an unknown, revoked or malformed routing_key; nothing stored"),
        429: _answer("throttle event: retry after Retry-After seconds"),
        503: _answer("nothing stored; retry later"),
    },
)
async def pagerduty_enqueue(request: Request) -> Response:
    try:
        return await _enqueue(request)
    except Exception as exc:  # every answer in Events v2's terms; what describe() does not know, as any route
        if describe(exc) is None:
            raise
        return _in_events_v2_terms(exc)


async def _enqueue(request: Request) -> Response:
    state = get_state(request)
    limit = state.settings.limits.body_bytes
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise BodyTooLarge(f"the event is larger than {limit} bytes")
    event = pd.parse_event(await receive_body(request.receive, limit))
    async with state.sessions() as session:
        found = await find_key(session, event.routing_key)
    if found is None:
        raise pd.InvalidEvent([INVALID_ROUTING_KEY])
    key, topic = found
    if topic.status != "ACTIVE":
        raise pd.InvalidEvent(["the routing key's workflow topic is not ACTIVE"])
    policy = policy_type(topic.spec.get("control_policy_profile")).value
    ref = TopicRef(topic.id, topic.key, topic.status, policy)
    event_id = new_id("evt")
    dedup_key = event.dedup_key or event_id  # as Events v2, a trigger without one is given one
    payload = check_publish(pd.publish_request(event, dedup_key), state.input_limits, partition_key_required=True)
    wait = state.publish_limits.take((f"integration_key/{key.id}", topic.id), 1)
    if wait:
        raise RateLimited("events for this routing key are arriving too quickly; retry later", retry_after=wait)
    (record,) = publish_records(
        state, topic.organization_id, ref, [payload], [event_id], now_ms(), scope_request_id(request.scope)
    )
    await produce(state, record)
    answer = {"status": "success", "message": "Event processed", "dedup_key": dedup_key, "event_id": event_id}
    return json_response(answer, status_code=202)


def _in_events_v2_terms(exc: Exception) -> Response:
    if isinstance(exc, pd.InvalidEvent):
        errors = exc.errors
    elif isinstance(exc, BodyTooLarge):
        errors = [exc.message]
    elif isinstance(exc, ValidationError | InvalidInput):
        described = describe(exc)
        assert described is not None  # both kinds are the API's own 422s
        fields = described[1].get("details", {}).get("fields", ())
        named = [(pd.event_field(str(f.get("field", ""))), f.get("message")) for f in fields]
        errors = [f"'{field}': {message}" if field else str(message) for field, message in named]
        errors = errors or [str(described[1].get("message"))]
    else:
        described = describe(exc)
        assert described is not None
        status, body, headers = described
        if status == 429:
            answer = {"status": "throttle event", "message": body["message"]}
        else:
            answer = {"status": "error" if status >= 500 else "invalid event", "message": body["message"]}
        return json_response(answer, status_code=status, headers=headers)
    return json_response({"status": "invalid event", "message": "Event object is invalid", "errors": errors}, 400)
