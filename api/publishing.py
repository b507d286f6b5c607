"""Publish: authenticate, authorize, validate, write to Kafka (acks=all; in a transaction if set).

This is the hot path: one cached token lookup, one cached topic lookup, one pydantic
validation from raw bytes, one produce awaited until the broker acknowledged it or, with
TOCSIN_PUBLISH_TRANSACTIONS, until its transaction is committed (the replica's publishes share
transactions, api/publisher.py). :func:`accept_publish` is the one implementation; the ASGI fast
path (api/fastpath.py) serves it before FastAPI's routing, and the route (api/routes/publish.py)
serves it otherwise and documents it in the OpenAPI document. The batch publish
(api/publish_batch.py) and the Alertmanager receiver (api/formats/alertmanager.py) use the same
steps: the publisher and topic, the rate limit, the records.

It also takes a CloudEvent 1.0 (api/formats/cloudevents.py) in binary mode (``ce-*`` headers) or
structured mode (``application/cloudevents+json``): the event becomes the publish request it maps to
and is checked, limited and written as that request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError
from sqlalchemy.exc import OperationalError
from starlette.types import Receive, Scope

from api.body import (
    check_content_encoding,
    check_content_length,
    check_json_headers,
    receive_body,
)
from api.deps import authenticate, authorize_topic
from api.formats import cloudevents
from api.producers import Record
from api.state import ApiState, TopicRef
from app.clock import now_ms
from app.domain.events.control import policy_type
from app.domain.events.publish import PublishRecordEncoder, PublishRequest, idempotency_stage_key, state_key
from app.domain.events.publish_check import check_publish
from app.domain.iam.principal import Principal
from app.domain.shared.ids import new_id
from app.errors import (
    Conflict,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unavailable,
)
from app.kafka.topics import IDEMPOTENCY, PUBLISH
from app.observability import tracing
from app.store.workflows import find_topic

PERMISSION = "organization.workflow_topic:publish"


async def load_topic(state: ApiState, org_id: str, id_or_key: str) -> tuple[str, TopicRef]:
    try:
        async with state.sessions() as session:
            topic = await find_topic(session, org_id, id_or_key)
    except OperationalError as exc:
        raise Unavailable("the database is unavailable; the event was not accepted, retry later") from exc
    if topic is None:
        raise NotFound("workflow topic not found")
    policy = policy_type(topic.spec.get("control_policy_profile")).value
    return org_id, TopicRef(topic.id, topic.key, topic.status, policy)


async def topic_ref(state: ApiState, org_id: str, id_or_key: str) -> TopicRef | None:
    """The topic the path names by id or key (cached), or None."""
    try:
        return state.topics.get((org_id, id_or_key)) or await state.topics.get_or_load(
            (org_id, id_or_key), lambda: load_topic(state, org_id, id_or_key)
        )
    except NotFound:
        return None


async def publisher_and_topic(
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
    ref = await topic_ref(state, org_id, topic)
    authorize_topic(principal, org_id, PERMISSION, topic, (ref.id, ref.key) if ref is not None else None)
    return principal, ref


def active_topic(ref: TopicRef | None) -> TopicRef:
    if ref is None:
        raise NotFound("workflow topic not found")
    if ref.status != "ACTIVE":
        raise Conflict("workflow topic is not ACTIVE")
    return ref


def needs_partition_key(ref: TopicRef | None) -> bool:
    return ref is not None and ref.policy != "BYPASS"


def take_tokens(state: ApiState, principal: Principal, ref: TopicRef, count: int) -> None:
    """One token of the account's publish rate on the topic per event (429 with Retry-After)."""
    wait = state.publish_limits.take((principal.account_id, ref.id), count)
    if wait:
        raise RateLimited("too many publishes by this account to this topic; retry later", retry_after=wait)


def scope_request_id(scope: Scope) -> str | None:
    """The request id this request's lines carry (chosen by api/fastpath.py), which the record
    carries to the worker's lines about its events (None outside a served request)."""
    rid = scope.get("tocsin.request_id")
    return rid.decode("ascii") if isinstance(rid, bytes) else None


def publish_records(
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
        # Through the idempotency stage first, keyed by the key whatever the partition (docs/operations/partitions.md),
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
    principal, ref = await publisher_and_topic(state, org_id, topic, authorization)
    limit = state.settings.limits.body_bytes
    required = needs_partition_key(ref)
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
    ref = active_topic(ref)
    take_tokens(state, principal, ref, 1)
    event_id = new_id("evt")
    (record,) = publish_records(state, org_id, ref, [payload], [event_id], now_ms(), request_id)
    await produce(state, record)
    return event_id


async def produce(state: ApiState, record: Record) -> None:
    """With TOCSIN_PUBLISH_TRANSACTIONS: return once the record is committed in a transaction
    (api/publisher.py); :class:`Unavailable` (503) when it will never be, within
    TOCSIN_PRODUCE_TIMEOUT_SECONDS unless its commit was already asked for (then the commit's
    outcome decides). Without: send and wait for the broker's acknowledgement, or 503 within the
    timeout (the record may still be written later and decided: docs/concepts/publish-guarantee.md)."""
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
