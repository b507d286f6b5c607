"""The publish routes: ``POST .../publish`` (api/publishing.py's :func:`accept_publish`, which the ASGI
fast path, api/fastpath.py, serves before FastAPI's routing) and ``POST .../publish:batch``
(api/publish_batch.py), with their OpenAPI description and the spans of their requests."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import Field
from starlette.requests import ClientDisconnect

from api.deps import get_state, permission_extra
from api.errors import describe, error_responses
from api.formats import cloudevents
from api.models import Out
from api.publish_batch import accept_batch
from api.publishing import PERMISSION, accept_publish, scope_request_id
from api.responses import json_response
from app.domain.events.publish import PublishRequest
from app.observability import trace_context, tracing

router = APIRouter(prefix="/v1/organizations/{org_id}/workflow_topics", tags=["publish"])


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
