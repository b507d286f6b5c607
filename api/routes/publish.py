"""Publish: authenticate, authorize, validate, write to Kafka (acks=all; in a transaction if set), answer 202.

This is the hot path: one cached token lookup, one cached topic lookup, one pydantic
validation from raw bytes, one produce awaited until the broker acknowledged it or, with
TOCSIN_PUBLISH_TRANSACTIONS, until its transaction is committed (the replica's publishes share
transactions, api/publisher.py).
:func:`accept_publish` is the one implementation; the ASGI fast path (api/fastpath.py)
serves it before FastAPI's routing, and the route below serves it otherwise and documents
it in the OpenAPI document.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError
from fastapi import APIRouter, Request, Response
from pydantic import Field
from sqlalchemy.exc import OperationalError
from starlette.types import Receive

from api.body import check_json_headers, receive_body
from api.deps import authenticate, authorize_topic, get_state, permission_extra
from api.errors import error_responses
from api.limits import limits_exceeded
from api.models import Out
from api.responses import json_response
from api.state import ApiState, TopicRef
from app.clock import now_ms
from app.domain.control import policy_type
from app.domain.ids import new_id
from app.domain.limits import publish_violations
from app.domain.publish import PublishRequest, idempotency_stage_key, publish_record, state_key
from app.errors import Conflict, InvalidInput, NotFound, PermissionDenied, RateLimited, Unavailable
from app.kafka import records
from app.kafka.topics import IDEMPOTENCY, PUBLISH
from app.observability import tracing
from app.store.workflows import find_topic

router = APIRouter(prefix="/v1/organizations/{org_id}/workflow_topics", tags=["publish"])

PERMISSION = "organization.workflow_topic:publish"


class PublishAccepted(Out):
    id: str = Field(description="the server's event id (GET /events/{id}; in every effect id)")


async def _load_topic(state: ApiState, org_id: str, id_or_key: str) -> tuple[str, TopicRef]:
    try:
        async with state.sessions() as session:
            topic = await find_topic(session, org_id, id_or_key)
    except OperationalError as exc:
        raise Unavailable("the database is unavailable; the event was not accepted, retry later") from exc
    if topic is None:
        raise NotFound("workflow topic not found")
    policy = policy_type(topic.spec.get("control_policy_profile")).value
    return org_id, TopicRef(topic.id, topic.key, topic.status, policy)


async def _topic_ref(state: ApiState, org_id: str, id_or_key: str) -> TopicRef | None:
    """The topic the path names by id or key (cached), or None."""
    try:
        return state.topics.get((org_id, id_or_key)) or await state.topics.get_or_load(
            (org_id, id_or_key), lambda: _load_topic(state, org_id, id_or_key)
        )
    except NotFound:
        return None


async def accept_publish(
    state: ApiState,
    org_id: str,
    topic: str,
    *,
    authorization: str | None,
    content_type: str,
    content_length: str | None,
    receive: Receive,
) -> str:
    """Check, validate and produce one publish; the server's event id once its record is stored
    (committed, with TOCSIN_PUBLISH_TRANSACTIONS)."""
    principal = await authenticate(state, authorization)
    if principal.organization_id != org_id:
        raise NotFound("not found")  # before anything else: nothing of another organization shows
    if principal.kind != "service_account":
        raise PermissionDenied(
            "publishing needs a service account (with an access token or a federated credential); "
            "a user account cannot publish",
            details={"permission": PERMISSION, "account_kind": principal.kind},
        )
    ref = await _topic_ref(state, org_id, topic)
    authorize_topic(principal, org_id, PERMISSION, topic, (ref.id, ref.key) if ref is not None else None)
    limit = state.settings.max_body_bytes
    check_json_headers(content_type, content_length, limit)
    body = await receive_body(receive, limit)
    payload = PublishRequest.model_validate_json(body)
    if violations := publish_violations(payload, body, state.input_limits):
        raise limits_exceeded(violations)
    if ref is None:
        raise NotFound("workflow topic not found")
    if ref.status != "ACTIVE":
        raise Conflict("workflow topic is not ACTIVE")
    wait = state.publish_limits.take((principal.account_id, ref.id))
    if wait:
        raise RateLimited("too many publishes by this account to this topic; retry later", retry_after=wait)
    partition = payload.partition_key
    if partition is None and ref.policy != "BYPASS":
        raise InvalidInput(
            "event_control.partition_key is required on topics with a control policy",
            details={"fields": [{"field": "event_control.partition_key", "message": "required"}]},
        )
    event_id = new_id("evt")
    accepted_ms = now_ms()
    record = publish_record(event_id=event_id, org_id=org_id, topic_id=ref.id, request=payload, accepted_ms=accepted_ms)
    key = state_key(org_id, ref.id, payload.status.value, partition or event_id)
    if payload.attributes is not None and payload.attributes.idempotency_key is not None:
        # Through the idempotency stage first, keyed by the key whatever the partition (DESIGN.md),
        # per publish status: an exercise never suppresses a real event (nor the other way round).
        record["state_key"] = key
        idem_key = idempotency_stage_key(org_id, ref.id, payload.status.value, payload.attributes.idempotency_key)
        await _produce(state, IDEMPOTENCY, idem_key.encode(), records.encode(record), accepted_ms)
    else:
        await _produce(state, PUBLISH, key.encode(), records.encode(record), accepted_ms)
    return event_id


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
    response_model=PublishAccepted,
    responses={
        202: {"description": "Accepted; the broker has the event's record (committed, with transactions on)"},
        **error_responses(409, 429),  # the topic is INACTIVE; the account's rate on the topic
    },
)
async def publish(org_id: str, topic: str, request: Request) -> Response:
    headers = request.headers
    event_id = await accept_publish(
        get_state(request),
        org_id,
        topic,
        authorization=headers.get("authorization"),
        content_type=headers.get("content-type", ""),
        content_length=headers.get("content-length"),
        receive=request.receive,
    )
    return json_response({"id": event_id}, status_code=202)


async def _produce(state: ApiState, topic: str, key: bytes, value: bytes, timestamp_ms: int) -> None:
    """With TOCSIN_PUBLISH_TRANSACTIONS: return once the record is committed in a transaction
    (api/publisher.py); :class:`Unavailable` (503) when it will never be, within
    TOCSIN_PRODUCE_TIMEOUT_SECONDS unless its commit was already asked for (then the commit's
    outcome decides). Without: send and wait for the broker's acknowledgement, or 503 within the
    timeout (the record may still be written later and decided: README, Publish guarantee)."""
    if state.publisher is not None:
        await state.publisher.publish(state.settings.topic(topic), key, value, timestamp_ms)
        return
    settings = state.settings
    producer = state.producer
    try:
        async with asyncio.timeout(settings.produce_timeout_seconds):
            # with tracing on, the request's span continues in the worker (app/observability/tracing.py)
            headers = tracing.record_headers() if tracing.enabled else None
            sent = await producer.send(
                settings.topic(topic), value=value, key=key, timestamp_ms=timestamp_ms, headers=headers
            )
            await sent
    except (TimeoutError, KafkaError) as exc:
        await _renew_quietly(state, producer, exc)
        raise Unavailable("the event broker is unavailable; the event was not accepted, retry later") from exc


async def _renew_quietly(state: ApiState, producer: AIOKafkaProducer, failure: BaseException) -> None:
    try:
        await state.renew_producer_if_dead(producer, failure)
    except (TimeoutError, KafkaError) as exc:
        logging.getLogger(__name__).warning("could not replace the stopped Kafka producer yet: %r", exc)
