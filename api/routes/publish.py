"""Publish: authenticate, authorize, validate, write to Kafka (acks=all), answer 202.

This is the hot path: one cached token lookup, one cached topic lookup, one pydantic
validation from raw bytes, one produce awaited until the broker acknowledged it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka.errors import KafkaError
from fastapi import APIRouter, Request, Response

from api.body import read_json_body
from api.deps import authenticate, authorize, get_state, permission_extra
from api.responses import json_response
from api.state import ApiState, TopicRef
from app import records
from app.domain import iam
from app.domain.control import policy_type
from app.domain.ids import new_id
from app.domain.publish import PublishRequest, publish_record, state_key
from app.errors import Conflict, InvalidInput, NotFound, Unavailable
from app.store.workflows import find_topic
from app.topics import PUBLISH

router = APIRouter(prefix="/v1/organizations/{org_id}/workflow_topics", tags=["publish"])

PERMISSION = "organization.workflow_topic:publish"


async def _topic(state: ApiState, org_id: str, id_or_key: str) -> TopicRef:
    ref = state.topics.get((org_id, id_or_key))
    if ref is not None:
        return ref
    async with state.sessions() as session:
        topic = await find_topic(session, org_id, id_or_key)
    if topic is None:
        raise NotFound("workflow topic not found")
    ref = TopicRef(topic.id, topic.key, topic.status, policy_type(topic.spec.get("control_policy_profile")).value)
    state.topics.put((org_id, id_or_key), org_id, ref)
    return ref


@router.post(
    "/{topic}/publish",
    status_code=202,
    openapi_extra={
        **permission_extra(PERMISSION),
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": PublishRequest.model_json_schema()}},
        },
    },
    responses={202: {"description": "Accepted; the broker acknowledged the event"}},
)
async def publish(org_id: str, topic: str, request: Request) -> Response:
    state = get_state(request)
    principal = await authenticate(state, request.headers.get("authorization"))
    authorize(principal, org_id, PERMISSION, iam.resource_name(org_id, "workflow_topics", topic))
    body = await read_json_body(request, state.settings.max_body_bytes)
    payload = PublishRequest.model_validate_json(body)
    ref = await _topic(state, org_id, topic)
    if ref.status != "ACTIVE":
        raise Conflict("workflow topic is not ACTIVE")
    partition = payload.partition_key
    if partition is None and ref.policy != "BYPASS":
        raise InvalidInput(
            "event_control.partition_key is required on topics with a control policy",
            details={"fields": [{"field": "event_control.partition_key", "message": "required"}]},
        )
    event_id = new_id("evt")
    accepted_ms = int(time.time() * 1000)
    value = records.encode(
        publish_record(event_id=event_id, org_id=org_id, topic_id=ref.id, request=payload, accepted_ms=accepted_ms)
    )
    key = state_key(org_id, ref.id, payload.status.value, partition or event_id).encode()
    await _produce(state, key, value, accepted_ms)
    return json_response({"id": event_id}, status_code=202)


async def _produce(state: ApiState, key: bytes, value: bytes, timestamp_ms: int) -> None:
    """Send and wait for the broker's acknowledgement, or fail with 503 within the timeout."""
    settings = state.settings
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.produce_timeout_seconds
    try:
        future: asyncio.Future[Any] = await asyncio.wait_for(
            state.producer.send(settings.topic(PUBLISH), value=value, key=key, timestamp_ms=timestamp_ms),
            settings.produce_timeout_seconds,
        )
        await asyncio.wait_for(future, max(deadline - loop.time(), 0.001))
    except (TimeoutError, KafkaError) as exc:
        raise Unavailable("the event broker is unavailable; the event was not accepted, retry later") from exc
