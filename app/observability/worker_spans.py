"""The worker's spans, through the OpenTelemetry SDK: continuing the trace a record or an item carries
(``traceparent`` and ``tracestate``), the span of a delivery attempt and its outcome, the incidents of
a stored batch. The API's publish spans, made ahead and encoded without the SDK, are tracing.py's."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import structlog

from app.observability import trace_context, tracing


def context_of_item(item: Mapping[str, Any]) -> Any:
    """The context an item's trace fields (``trace_context.item_fields``) continue; an empty one when its
    traceparent is not valid. A tracestate the propagator refuses is dropped."""
    carrier = {trace_context.HEADER: str(item[trace_context.ITEM_FIELD])}
    state = item.get(trace_context.STATE_FIELD)
    if isinstance(state, str) and state:
        carrier["tracestate"] = state
    return trace_context.propagator().extract(carrier)


def context_from_headers(headers: Iterable[tuple[str, bytes]] | Mapping[str, bytes] | None) -> Any:
    """The context of a Kafka record's valid ``traceparent`` header, with its ``tracestate``
    (pairs of name and bytes, or a mapping); None without one (the record is not traced)."""
    if not headers:
        return None
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    carrier = {
        name: bytes(value).decode("latin-1") for name, value in pairs if name in (trace_context.HEADER, "tracestate")
    }
    return trace_context.valid_context(carrier) if trace_context.HEADER in carrier else None


def forwarded(headers: Iterable[tuple[str, bytes]] | Mapping[str, bytes] | None) -> list[tuple[str, bytes]]:
    """The trace headers of a record, for the record forwarded in its place (the idempotency agent)."""
    if not headers:
        return []
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(name, bytes(value)) for name, value in pairs if name in (trace_context.HEADER, "tracestate")]


@contextlib.contextmanager
def child_span(name: str, parent: Any, kind: str, attributes: Mapping[str, Any]) -> Iterator[Any]:
    """A span continuing ``parent`` (a context from :func:`context_from_headers` or
    :func:`context_of_item`), current inside the block; its trace id bound to the log
    lines meanwhile. ``kind``: ``consumer``, ``client`` or ``internal``."""
    from opentelemetry.trace import SpanKind

    with (
        tracing.tracer().start_as_current_span(
            name, context=parent, kind=SpanKind[kind.upper()], attributes=dict(attributes)
        ) as span,
        structlog.contextvars.bound_contextvars(trace_id=trace_context.trace_id_of(span)),
    ):
        yield span


def record_error(span: Any, description: str) -> None:
    """Mark ``span`` failed (a delivery attempt that did not succeed)."""
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, description[:200]))


def timed_span(name: str, parent: Any, start_ns: int, end_ns: int, attributes: Mapping[str, Any]) -> None:
    """A finished span of what happened between ``start_ns`` and ``end_ns`` (time.time_ns), for
    work done for many items at once (one span per item of a batch write)."""
    from opentelemetry.trace import SpanKind

    span = tracing.tracer().start_span(
        name, context=parent, kind=SpanKind.INTERNAL, attributes=dict(attributes), start_time=start_ns
    )
    span.end(end_time=end_ns)


def delivery_span(kind: str, item: Mapping[str, Any]) -> contextlib.AbstractContextManager[Any]:
    """The span of one delivery attempt (``deliver WEBHOOK``...), a child of the decision's."""
    attributes = {
        "tocsin.event_id": item["event_id"],
        "tocsin.organization_id": item["organization_id"],
        "tocsin.effect_id": item["effect_id"],
        "tocsin.delivery.kind": kind,
        "tocsin.delivery.attempt": int(item.get("attempt", 1)),
    }
    return child_span(f"deliver {kind}", context_of_item(item), "client", attributes)


def attempt_outcome(span: Any, status_code: int | None, error: str | None) -> None:
    """The attempt's answer on its span, marked failed when there was none or it was an error
    (an HTTP status of 400 or more, an SMTP reply of 400 or more)."""
    if status_code is not None:
        span.set_attribute("tocsin.delivery.status_code", status_code)
    if error or status_code is None or status_code >= 400:
        record_error(span, error or f"status {status_code}")


def incident_spans(actions: Iterable[Mapping[str, Any]], start_ns: int, end_ns: int) -> None:
    """One ``incident`` span per incident action of a stored batch (each a child of its decision's)."""
    for action in actions:
        if action.get(trace_context.ITEM_FIELD):
            attributes = {
                "tocsin.event_id": action["event_id"],
                "tocsin.organization_id": action["organization_id"],
                "tocsin.effect_id": action["effect_id"],
                "tocsin.decision": str(action.get("decision") or "NOTIFY"),
            }
            timed_span("incident", context_of_item(action), start_ns, end_ns, attributes)
