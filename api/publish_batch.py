"""The batch publish (``POST .../publish:batch``): up to TOCSIN_MAX_PUBLISH_BATCH_ITEMS requests as a
JSON array, NDJSON or a CloudEvents batch (``application/cloudevents-batch+json``), each checked
exactly as a single publish (app/domain/events/publish_check.py), one rate-limit token per event, and
all its records written in one Kafka transaction (whatever TOCSIN_PUBLISH_TRANSACTIONS says): all
stored, or none."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from starlette.types import Receive

from api.body import (
    BatchItem,
    check_body_headers,
    check_content_length,
    is_ndjson,
    receive_body,
    split_batch,
)
from api.errors import describe
from api.formats import cloudevents
from api.publishing import active_topic, needs_partition_key, publish_records, publisher_and_topic, take_tokens
from api.state import ApiState
from app.clock import now_ms
from app.domain.events.publish import PublishRequest
from app.domain.events.publish_check import check_batch_at_once, check_publish, limits_error
from app.domain.shared.ids import new_ids
from app.domain.shared.json_bounds import may_exceed
from app.errors import (
    InvalidInput,
    Unavailable,
    UnsupportedMediaType,
)

CHECKS_BETWEEN_YIELDS = 32  # requests of a batch checked between two turns of the event loop (a few ms)
MAX_LISTED_REFUSALS = 100  # a refused batch lists this many refused requests at most: checking stops there


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
    principal, ref = await publisher_and_topic(state, org_id, topic, authorization)
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
    required = needs_partition_key(ref)
    at_once = None
    cloudevents_batch = cloudevents.is_batch(content_type)
    if cloudevents_batch:
        at_once = await checked_one_by_one(state, body, ndjson=False, required=required, cloudevents_batch=True)
    elif not ndjson:
        at_once = check_batch_at_once(
            body,
            state.input_limits,
            max_items=settings.limits.publish_batch_items,
            max_request_bytes=settings.limits.body_bytes,
            partition_key_required=required,
        )
    payloads = (
        at_once if at_once is not None else await checked_one_by_one(state, body, ndjson=ndjson, required=required)
    )
    ref = active_topic(ref)  # after the body: 422 before 409, as a single publish
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
    take_tokens(state, principal, ref, len(payloads))
    accepted_ms = now_ms()
    ids = new_ids("evt", len(payloads))
    batch = publish_records(state, org_id, ref, payloads, ids, accepted_ms, request_id)
    publisher = state.batch_publisher
    if publisher is None:
        raise Unavailable("batch publishes are not available on this replica yet; nothing was accepted, retry later")
    await publisher.publish_batch(batch)
    return ids


async def checked_one_by_one(
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
