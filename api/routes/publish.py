"""Publish: authenticate, authorize, validate, write to Kafka (acks=all; in a transaction if set), answer 202.

This is the hot path: one cached token lookup, one cached topic lookup, one pydantic
validation from raw bytes, one produce awaited until the broker acknowledged it or, with
TOCSIN_PUBLISH_TRANSACTIONS, until its transaction is committed (the replica's publishes share
transactions, api/publisher.py).
:func:`accept_publish` is the one implementation; the ASGI fast path (api/fastpath.py)
serves it before FastAPI's routing, and the route below serves it otherwise and documents
it in the OpenAPI document.

The batch publish (``POST .../publish:batch``, :func:`accept_batch`) takes up to
TOCSIN_MAX_PUBLISH_BATCH_ITEMS requests as a JSON array or NDJSON, checks each exactly as a single
publish (app/domain/events/publish_check.py), takes one rate-limit token per event, and writes all its
records in one Kafka transaction (whatever TOCSIN_PUBLISH_TRANSACTIONS says): all stored, or none.

Both also take CloudEvents 1.0 (api/formats/cloudevents.py): a single publish in binary mode (``ce-*``
headers) or structured mode (``application/cloudevents+json``), a batch in batch mode
(``application/cloudevents-batch+json``); each event becomes the publish request it maps to and is
checked, limited and written as that request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from typing import Any

import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError
from fastapi import APIRouter, Request, Response
from pydantic import Field, ValidationError
from sqlalchemy.exc import OperationalError
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope

from api.body import (
    BatchItem,
    check_body_headers,
    check_content_encoding,
    check_content_length,
    check_json_headers,
    is_ndjson,
    receive_body,
    split_batch,
)
from api.deps import authenticate, authorize_topic, get_state, permission_extra
from api.errors import describe, error_responses
from api.formats import cloudevents
from api.models import Out
from api.publisher import Record
from api.responses import json_response
from api.state import ApiState, TopicRef
from app.clock import now_ms
from app.domain.events.control import policy_type
from app.domain.events.publish import PublishRecordEncoder, PublishRequest, idempotency_stage_key, state_key
from app.domain.events.publish_check import check_batch_at_once, check_publish, limits_error
from app.domain.iam.principal import Principal
from app.domain.shared.ids import new_id, new_ids
from app.domain.shared.json_bounds import may_exceed
from app.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unavailable,
    UnsupportedMediaType,
)
from app.kafka.topics import IDEMPOTENCY, PUBLISH
from app.observability import trace_context, tracing
from app.store.workflows import find_topic

router = APIRouter(prefix="/v1/organizations/{org_id}/workflow_topics", tags=["publish"])

PERMISSION = "organization.workflow_topic:publish"
CHECKS_BETWEEN_YIELDS = 32  # requests of a batch checked between two turns of the event loop (a few ms)
MAX_LISTED_REFUSALS = 100  # a refused batch lists this many refused requests at most: checking stops there


# A CloudEvent in the JSON event format: the attributes this route reads (docs/api.md, CloudEvents).
_CLOUDEVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["specversion", "id", "source", "type", "data"],
    "properties": {
        "specversion": {"const": "1.0"},
        "id": {"type": "string", "description": "with source: the idempotency key"},
        "source": {"type": "string"},
        "type": {"type": "string", "description": "event.name"},
        "subject": {"type": "string", "description": "event.description"},
        "datacontenttype": {"type": "string", "description": "absent or JSON"},
        "data": {"type": "object", "description": "data"},
        "partitionkey": {"type": "string", "description": "event_control.partition_key"},
        "tocsinstatus": {"enum": ["ACTUAL", "DRILL", "TEST"], "description": "status (default ACTUAL)"},
        "tocsinmetrics": {"type": "string", "description": "event_control.metrics as JSON text"},
        "tocsinareas": {"type": "string", "description": "event_control.areas as JSON text"},
        "tocsinaction": {"enum": ["trigger", "acknowledge", "resolve"], "description": "event_control.action"},
    },
}


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


async def _publisher_and_topic(
    state: ApiState, org_id: str, topic: str, authorization: str | None
) -> tuple[Principal, TopicRef | None]:
    """The caller, allowed to publish to the topic the path names (None: it does not exist: 404
    once the body was checked, as the permission check could not tell)."""
    principal = await authenticate(state, authorization)
    if principal.organization_id != org_id:
        raise NotFound("not found")  # before anything else: nothing of another organization shows
    # The request's log lines name the organization from here on, not before: the path is anyone's
    # to write, so an unauthenticated request (or another organization's caller) tagged no line
    # with it. Bound in the request's own context (this coroutine is awaited, not a task).
    structlog.contextvars.bind_contextvars(organization_id=org_id)
    if principal.kind != "service_account":
        raise PermissionDenied(
            "publishing needs a service account (with an access token or a federated credential); "
            "a user account cannot publish",
            details={"permission": PERMISSION, "account_kind": principal.kind},
        )
    ref = await _topic_ref(state, org_id, topic)
    authorize_topic(principal, org_id, PERMISSION, topic, (ref.id, ref.key) if ref is not None else None)
    return principal, ref


def _active(ref: TopicRef | None) -> TopicRef:
    if ref is None:
        raise NotFound("workflow topic not found")
    if ref.status != "ACTIVE":
        raise Conflict("workflow topic is not ACTIVE")
    return ref


def _needs_partition_key(ref: TopicRef | None) -> bool:
    return ref is not None and ref.policy != "BYPASS"


def _take_tokens(state: ApiState, principal: Principal, ref: TopicRef, count: int) -> None:
    """One token of the account's publish rate on the topic per event (429 with Retry-After)."""
    wait = state.publish_limits.take((principal.account_id, ref.id), count)
    if wait:
        raise RateLimited("too many publishes by this account to this topic; retry later", retry_after=wait)


def scope_request_id(scope: Scope) -> str | None:
    """The request id this request's lines carry (chosen by api/fastpath.py), which the record
    carries to the worker's lines about its events (None outside a served request)."""
    rid = scope.get("tocsin.request_id")
    return rid.decode("ascii") if isinstance(rid, bytes) else None


def _records(
    state: ApiState,
    org_id: str,
    ref: TopicRef,
    payloads: list[PublishRequest],
    event_ids: list[str],
    accepted_ms: int,
    request_id: str | None,
) -> tuple[Record, ...]:
    """The records of one request's accepted publishes (one, or a batch's), in order."""
    encoder = PublishRecordEncoder(org_id, ref.id, accepted_ms, request_id)
    publish_topic, idempotency_topic = state.settings.topic(PUBLISH), state.settings.topic(IDEMPOTENCY)
    # with tracing on, the request's span continues in the worker (app/observability/tracing.py)
    trace = tracing.publish_headers() if tracing.enabled else ()
    records = []
    for payload, event_id in zip(payloads, event_ids, strict=True):
        status = payload.status.value
        key = state_key(org_id, ref.id, status, payload.partition_key or event_id)
        idempotency_key = payload.attributes.idempotency_key if payload.attributes is not None else None
        if idempotency_key is None:
            records.append(Record(publish_topic, key.encode(), encoder.encode(event_id, payload), accepted_ms, trace))
            continue
        # Through the idempotency stage first, keyed by the key whatever the partition (DESIGN.md),
        # per publish status: an exercise never suppresses a real event (nor the other way round).
        idem_key = idempotency_stage_key(org_id, ref.id, status, idempotency_key)
        value = encoder.encode(event_id, payload, state_key=key)
        records.append(Record(idempotency_topic, idem_key.encode(), value, accepted_ms, trace))
    return tuple(records)


async def accept_publish(
    state: ApiState,
    org_id: str,
    topic: str,
    *,
    authorization: str | None,
    content_type: str,
    content_length: str | None,
    receive: Receive,
    request_id: str | None = None,
    content_encoding: str | None = None,
    cloudevent_headers: Sequence[tuple[bytes, bytes]] | None = None,
) -> str:
    """Check, validate and produce one publish; the server's event id once its record is stored
    (committed, with TOCSIN_PUBLISH_TRANSACTIONS). ``cloudevent_headers``: the request's ``ce-*``
    headers, when it has any (a CloudEvent in binary mode)."""
    principal, ref = await _publisher_and_topic(state, org_id, topic, authorization)
    limit = state.settings.limits.body_bytes
    required = _needs_partition_key(ref)
    if cloudevent_headers or cloudevents.is_structured(content_type) or cloudevents.is_batch(content_type):
        # binary mode's Content-Type is the event's datacontenttype (JSON or absent): judged with the event
        if not cloudevent_headers or cloudevents.is_structured(content_type):
            check_json_headers(content_type, content_length, limit, content_encoding)
        check_content_length(content_length, limit)
        check_content_encoding(content_encoding)
        body = await receive_body(receive, limit)
        payload = cloudevents.check_single(
            body, content_type, cloudevent_headers, state.input_limits, partition_key_required=required
        )
    else:
        check_json_headers(content_type, content_length, limit, content_encoding)
        body = await receive_body(receive, limit)
        payload = check_publish(body, state.input_limits, partition_key_required=required)
    ref = _active(ref)
    _take_tokens(state, principal, ref, 1)
    event_id = new_id("evt")
    (record,) = _records(state, org_id, ref, [payload], [event_id], now_ms(), request_id)
    await _produce(state, record)
    return event_id


async def accept_batch(
    state: ApiState,
    org_id: str,
    topic: str,
    *,
    authorization: str | None,
    content_type: str,
    content_length: str | None,
    receive: Receive,
    request_id: str | None = None,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> list[str]:
    """Check every request of a batch as a single publish, then produce them all in one
    transaction; the server's event ids, in the batch's order, once all are committed. Nothing is
    stored when one request is refused (422 naming each by index), when the rate limit has fewer
    tokens than the batch has events (429), or when the broker fails (503)."""
    principal, ref = await _publisher_and_topic(state, org_id, topic, authorization)
    settings = state.settings
    check_body_headers(headers, ndjson_allowed=True)  # after authentication, as a single publish
    if cloudevents.is_structured(content_type):
        raise UnsupportedMediaType(
            f"a single CloudEvent ({content_type}) goes to …/publish; "
            "here a batch is application/cloudevents-batch+json"
        )
    ndjson = is_ndjson(content_type)
    check_content_length(content_length, settings.limits.publish_batch_bytes)
    body = await receive_body(receive, settings.limits.publish_batch_bytes)
    required = _needs_partition_key(ref)
    at_once = None
    cloudevents_batch = cloudevents.is_batch(content_type)
    if cloudevents_batch:
        at_once = await _checked_one_by_one(state, body, ndjson=False, required=required, cloudevents_batch=True)
    elif not ndjson:
        at_once = check_batch_at_once(
            body,
            state.input_limits,
            max_items=settings.limits.publish_batch_items,
            max_request_bytes=settings.limits.body_bytes,
            partition_key_required=required,
        )
    payloads = (
        at_once if at_once is not None else await _checked_one_by_one(state, body, ndjson=ndjson, required=required)
    )
    ref = _active(ref)  # after the body: 422 before 409, as a single publish
    if not state.publish_limits.fits(len(payloads)):
        raise limits_error(
            [
                (
                    "",
                    f"{len(payloads)} events, more than the {settings.publish_burst} a publisher may send at once "
                    "(TOCSIN_PUBLISH_BURST); split the batch",
                )
            ]
        )
    _take_tokens(state, principal, ref, len(payloads))
    accepted_ms = now_ms()
    ids = new_ids("evt", len(payloads))
    batch = _records(state, org_id, ref, payloads, ids, accepted_ms, request_id)
    publisher = state.batch_publisher
    if publisher is None:
        raise Unavailable("batch publishes are not available on this replica yet; nothing was accepted, retry later")
    await publisher.publish_batch(batch)
    return ids


async def _checked_one_by_one(
    state: ApiState, body: bytes, *, ndjson: bool, required: bool, cloudevents_batch: bool = False
) -> list[PublishRequest]:
    """Each request of the batch checked as a single publish; 422 naming the refused ones (at most
    :data:`MAX_LISTED_REFUSALS`: checking stops there). Every :data:`CHECKS_BETWEEN_YIELDS` requests
    it lets the event loop serve others: a body of up to 4 MiB takes some 0.4 s to check, which
    held every other request of the replica (the health check answered in 1.4 s under four such
    clients). ``cloudevents_batch``: the array's elements are CloudEvents (batch mode), each checked as
    the publish request it maps to, refusals naming their attributes (api/formats/cloudevents.py)."""
    settings = state.settings
    items = split_batch(body, ndjson=ndjson, max_items=settings.limits.publish_batch_items)
    # one search of the whole body for numbers out of range, not one per request (a substring search)
    cleared = not may_exceed(body, None)
    payloads: list[PublishRequest] = []
    refused: list[dict[str, Any]] = []
    unchecked = 0
    for item in items:
        if len(refused) == MAX_LISTED_REFUSALS:  # enough to refuse the batch: the answer stays small
            unchecked = len(items) - item.index
            break
        if item.index and not item.index % CHECKS_BETWEEN_YIELDS:
            await asyncio.sleep(0)
        try:
            if len(item.body) > settings.limits.body_bytes:
                message = f"larger than {settings.limits.body_bytes} bytes (TOCSIN_MAX_BODY_BYTES, a publish's limit)"
                raise limits_error([("", message)])
            if cloudevents_batch:
                payloads.append(cloudevents.check_event(item.body, state.input_limits, partition_key_required=required))
                continue
            payloads.append(
                check_publish(item.body, state.input_limits, partition_key_required=required, numbers_cleared=cleared)
            )
        except (ValidationError, InvalidInput) as exc:
            refused.append(_refusal(item, exc))
    if refused:
        if unchecked:
            raise InvalidInput(
                f"{len(refused)} of the first {len(items) - unchecked} of {len(items)} publish requests refused "
                f"(checking stops at {MAX_LISTED_REFUSALS}; the other {unchecked} were not checked); "
                "nothing was stored",
                details={"items": refused, "unchecked": unchecked},
            )
        raise InvalidInput(
            f"{len(refused)} of {len(items)} publish requests refused; nothing was stored",
            details={"items": refused},
        )
    return payloads


def _refusal(item: BatchItem, exc: ValidationError | InvalidInput) -> dict[str, Any]:
    """``{index, line?, fields, more_fields?}``: why one request of a batch was refused, as a single
    publish says it."""
    described = describe(exc)
    assert described is not None  # both kinds are the API's own 422s
    refusal: dict[str, Any] = {"index": item.index}
    if item.line is not None:
        refusal["line"] = item.line
    details = described[1]["details"]
    refusal["fields"] = details.get("fields", [])
    if "more_fields" in details:
        refusal["more_fields"] = details["more_fields"]
    return refusal


@router.post(
    "/{topic}/publish",
    status_code=202,
    openapi_extra={
        **permission_extra(PERMISSION),
        "requestBody": {
            "required": True,
            "description": "a publish request (application/json), or one CloudEvent 1.0: structured mode "
            "(application/cloudevents+json) or binary mode (ce-* headers, the body is the event's data). "
            "The CloudEvents mapping: docs/api.md.",
            "content": {
                "application/json": {"schema": PublishRequest.model_json_schema()},
                "application/cloudevents+json": {"schema": _CLOUDEVENT_SCHEMA},
            },
        },
    },
    response_model=PublishAccepted,
    responses={
        202: {"description": "Accepted; the broker has the event's record (committed, with transactions on)"},
        **error_responses(409, 429),  # the topic is INACTIVE; the account's rate on the topic
    },
)
async def publish(org_id: str, topic: str, request: Request) -> Response:
    event_id = await accept_publish(get_state(request), org_id, topic, **_single_parts(request))
    return json_response({"id": event_id}, status_code=202)


def _request_parts(request: Request) -> dict[str, Any]:
    """What :func:`accept_publish` and :func:`accept_batch` read of the request (the ASGI fast
    path, api/fastpath.py, gives them the same from the raw scope). A single publish's headers are
    checked before the route (api/body.py, BodyLimitMiddleware), a batch's by :func:`accept_batch`."""
    headers = request.headers
    return {
        "authorization": headers.get("authorization"),
        "content_type": headers.get("content-type", ""),
        "content_length": headers.get("content-length"),
        "receive": request.receive,
        "request_id": scope_request_id(request.scope),
    }


def _single_parts(request: Request) -> dict[str, Any]:
    """:func:`_request_parts` of a single publish, with its CloudEvents binary-mode headers."""
    return {**_request_parts(request), "cloudevent_headers": cloudevents.binary_headers(request.scope["headers"])}


class BatchAccepted(Out):
    ids: list[str] = Field(description="the server's event ids, in the order of the batch's publish requests")


def _batch_schema() -> dict[str, Any]:
    """An array of the single publish's body; its ``$defs`` at the top, where the OpenAPI document
    hoists them from (api/errors.py)."""
    item = PublishRequest.model_json_schema()
    defs = item.pop("$defs", {})
    return {"type": "array", "items": item, "minItems": 1, "$defs": defs}


@router.post(
    "/{topic}/publish:batch",
    status_code=202,
    openapi_extra={
        **permission_extra(PERMISSION),
        "requestBody": {
            "required": True,
            "description": "publish requests, each as the single publish's body: a JSON array, or NDJSON "
            "(one per line); at most TOCSIN_MAX_PUBLISH_BATCH_ITEMS (1000) and TOCSIN_MAX_PUBLISH_BATCH_BYTES "
            "(4 MiB). All or nothing. Or CloudEvents 1.0 in batch mode (application/cloudevents-batch+json).",
            "content": {
                "application/json": {"schema": _batch_schema()},
                "application/cloudevents-batch+json": {"schema": {"type": "array", "items": _CLOUDEVENT_SCHEMA}},
                "application/x-ndjson": {"schema": {"type": "string", "description": "one publish request per line"}},
            },
        },
    },
    response_model=BatchAccepted,
    responses={
        202: {"description": "Accepted; every record of the batch is committed, in one transaction"},
        **error_responses(409, 429),  # the topic is INACTIVE; the account's rate on the topic (one per event)
    },
)
async def publish_batch(org_id: str, topic: str, request: Request) -> Response:
    # one span for the request; every record carries its traceparent (app/observability/tracing.py)
    span = (
        tracing.publish_span(
            "publish batch", BATCH_ROUTE, *trace_context.trace_headers(request.scope["headers"]), org_id, topic
        )
        if tracing.enabled
        else None
    )
    try:
        ids = await accept_batch(
            get_state(request), org_id, topic, **_request_parts(request), headers=request.scope["headers"]
        )
    except Exception as exc:
        if span is not None:  # the error handlers answer as describe() says (api/errors.py)
            described = describe(exc)
            if isinstance(exc, ClientDisconnect):
                status, message = 499, "the client went away"  # as the fast path's CLIENT_GONE
            elif described is None:
                status, message = 500, "internal error"
            else:
                status, message = described[0], str(described[1]["message"])
            span.end(status, (type(exc).__qualname__, message))
        raise
    if span is not None:
        span.set_attribute("tocsin.event_count", len(ids))
        span.end(202)
    return json_response({"ids": ids}, status_code=202)


BATCH_ROUTE = "/v1/organizations/{org_id}/workflow_topics/{topic}/publish:batch"


async def _produce(state: ApiState, record: Record) -> None:
    """With TOCSIN_PUBLISH_TRANSACTIONS: return once the record is committed in a transaction
    (api/publisher.py); :class:`Unavailable` (503) when it will never be, within
    TOCSIN_PRODUCE_TIMEOUT_SECONDS unless its commit was already asked for (then the commit's
    outcome decides). Without: send and wait for the broker's acknowledgement, or 503 within the
    timeout (the record may still be written later and decided: README, Publish guarantee)."""
    if state.publisher is not None:
        await state.publisher.publish_batch((record,))
        return
    settings = state.settings
    producer = state.producer
    try:
        async with asyncio.timeout(settings.produce_timeout_seconds):
            sent = await producer.send(
                record.topic,
                value=record.value,
                key=record.key,
                timestamp_ms=record.timestamp_ms,
                headers=list(record.headers) or None,
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
