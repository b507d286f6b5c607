"""Prometheus Alertmanager's webhook receiver:
``POST /v1/organizations/{org_id}/integrations/alertmanager/{topic}``.

Alertmanager's ``http_config.authorization`` sends a service account's bearer token holding the
topic's ``publish`` permission; each alert of the notification (webhook version 4) becomes one
publish request (app/domain/formats/alertmanager.py), checked exactly as a native publish, and
the notification's requests are written as one batch publish: all stored, in one transaction, or
none (Alertmanager retries a notification that got no ``2xx``; the idempotency keys drop what a
retry repeats). Refusals are the publish's ``422 VAL-001`` naming the webhook's own fields.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import Field, ValidationError

from api.body import check_content_length, check_json_headers, receive_body
from api.deps import get_state, permission_extra
from api.errors import describe, error_responses
from api.models import Out
from api.publishing import (
    PERMISSION,
    active_topic,
    needs_partition_key,
    publish_records,
    publisher_and_topic,
    scope_request_id,
    take_tokens,
)
from api.responses import json_response
from app.clock import now_ms
from app.domain.events.publish import PublishRequest
from app.domain.events.publish_check import check_publish
from app.domain.formats import alertmanager as am
from app.domain.shared.ids import new_ids
from app.errors import InvalidInput, Unavailable

router = APIRouter(prefix="/v1/organizations/{org_id}/integrations", tags=["publish"])


class AlertsAccepted(Out):
    ids: list[str] = Field(description="the server's event ids, one per alert, in the notification's order")


@router.post(
    "/alertmanager/{topic}",
    status_code=202,
    openapi_extra={
        **permission_extra(PERMISSION),
        "requestBody": {
            "required": True,
            "description": "Alertmanager's webhook body (version 4); each alert becomes one event keyed by its "
            "fingerprint: firing triggers, resolved resolves (docs/api.md, Alertmanager).",
            "content": {"application/json": {"schema": {"type": "object", "required": ["version", "alerts"]}}},
        },
    },
    response_model=AlertsAccepted,
    responses={
        202: {"description": "Accepted; every alert's record is committed, in one transaction"},
        **error_responses(409, 429),
    },
)
async def alertmanager_webhook(org_id: str, topic: str, request: Request) -> Response:
    state = get_state(request)
    headers = request.headers
    principal, ref = await publisher_and_topic(state, org_id, topic, headers.get("authorization"))
    limit = state.settings.limits.body_bytes  # as every route but the batch publish (api/body.py)
    check_json_headers(headers.get("content-type", ""), headers.get("content-length"), limit)
    check_content_length(headers.get("content-length"), limit)
    body = await receive_body(request.receive, limit)
    message = am.notification(body)
    if len(message["alerts"]) > state.settings.limits.publish_batch_items:
        raise am.refused("alerts", f"more than {state.settings.limits.publish_batch_items} alerts", "limit_exceeded")
    required = needs_partition_key(ref)
    payloads: list[PublishRequest] = []
    for prefix, native in am.alert_requests(message):
        try:
            payloads.append(check_publish(native, state.input_limits, partition_key_required=required))
        except (ValidationError, InvalidInput) as exc:
            raise _in_webhook_terms(prefix, exc) from None
    ref = active_topic(ref)
    take_tokens(state, principal, ref, len(payloads))
    ids = new_ids("evt", len(payloads))
    records = publish_records(state, org_id, ref, payloads, ids, now_ms(), scope_request_id(request.scope))
    publisher = state.batch_publisher
    if publisher is None:
        raise Unavailable("publishes are not available on this replica yet; nothing was accepted, retry later")
    await publisher.publish_batch(records)
    return json_response({"ids": ids}, status_code=202)


def _in_webhook_terms(prefix: str, exc: ValidationError | InvalidInput) -> InvalidInput:
    described = describe(exc)
    assert described is not None  # both kinds are the API's own 422s
    content: dict[str, Any] = described[1]
    details = dict(content.get("details") or {})
    fields: list[dict[str, Any]] = []
    for f in details.get("fields", ()):
        mapped = {**f, "field": am.webhook_field(prefix, str(f.get("field", "")))}
        # two native fields can come from one webhook field (the fingerprint is both the partition
        # key and part of the idempotency key): say its fault once
        if not any((g["field"], g.get("message")) == (mapped["field"], mapped.get("message")) for g in fields):
            fields.append(mapped)
    details["fields"] = fields
    said = "; ".join(f"{f['field']}: {f.get('message')}" for f in fields)
    return InvalidInput(f"Alertmanager webhook refused: {said or content.get('message')}", details=details)
