"""W3C trace context (``traceparent``, ``tracestate``) as the API and the worker read and write it: a
caller's trace from a request's headers, the fields a delivery or incident item carries to continue
the decision's trace, and the W3C propagator that reads them. No state: the spans are tracing.py's
(the API's publish spans) and worker_spans.py's (the SDK's)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

HEADER = "traceparent"
ITEM_FIELD = "traceparent"  # on the delivery and incident items the control agent sends
STATE_FIELD = "tracestate"  # beside it when the decision's trace has a W3C tracestate


# A caller's trace a request continues: trace id, span id, W3C flags and its tracestate ("": none).
Parent = tuple[int, int, int, str]


def caller_parent(traceparents: list[bytes] | None, tracestates: list[bytes] | None) -> Parent | None:
    """The caller's trace a request continues, from its ``traceparent`` and ``tracestate`` header
    values (None: none sent), read by the W3C propagator: None when there is not exactly one
    traceparent (W3C: a repeated one restarts the trace) or it is not valid. The tracestate
    headers are combined; one the propagator refuses (too long, a malformed member) is dropped."""
    if traceparents is None or len(traceparents) != 1:
        return None
    carrier = {HEADER: bytes(traceparents[0]).decode("latin-1")}
    if tracestates:
        carrier["tracestate"] = ",".join(bytes(value).decode("latin-1") for value in tracestates)
    context = valid_context(carrier)
    if context is None:
        return None
    from opentelemetry.trace import get_current_span

    ctx = get_current_span(context).get_span_context()
    return ctx.trace_id, ctx.span_id, int(ctx.trace_flags), ctx.trace_state.to_header() if ctx.trace_state else ""


def valid_context(carrier: Mapping[str, str]) -> Any:
    """The context the W3C propagator reads from ``carrier`` (``traceparent``, ``tracestate``), or
    None when its traceparent is missing or not valid."""
    from opentelemetry.trace import get_current_span

    context = propagator().extract(carrier)
    return context if get_current_span(context).get_span_context().is_valid else None


def trace_headers(headers: Iterable[tuple[bytes, bytes]]) -> tuple[list[bytes] | None, list[bytes] | None]:
    """A request's ``traceparent`` and ``tracestate`` header values (ASGI raw headers), for
    :func:`caller_parent` (the publish fast path collects them in its own loop)."""
    traceparents = tracestates = None
    for name, value in headers:
        if name == b"traceparent":
            traceparents = [*(traceparents or ()), value]
        elif name == b"tracestate":
            tracestates = [*(tracestates or ()), value]
    return traceparents, tracestates


@functools.cache
def propagator() -> Any:
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator()


def trace_id_of(span: Any) -> str:
    """The span's trace id as 32 hex digits (as W3C ``traceparent`` and the OTLP backends show it)."""
    return f"{span.get_span_context().trace_id:032x}"


def traceparent_of(span: Any) -> str:
    """The W3C ``traceparent`` that makes a span the parent of another process's span."""
    ctx = span.get_span_context()
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def item_fields(span: Any) -> dict[str, str]:
    """What a delivery or incident item carries to continue ``span`` (the decision's): its
    traceparent (:data:`ITEM_FIELD`) and, when its trace has one, its W3C tracestate
    (:data:`STATE_FIELD`): the vendors' entries a caller sent go with the whole trace."""
    fields = {ITEM_FIELD: traceparent_of(span)}
    state = span.get_span_context().trace_state
    if state:
        fields[STATE_FIELD] = state.to_header()
    return fields
