"""OpenTelemetry tracing: one trace per published event, from the publish request (API) through
its Kafka record to the decision (the worker's control agent) and each delivery attempt
(webhook, e-mail, push) and incident creation.

- The API's ``publish`` span is the parent; the publisher adds its W3C ``traceparent`` to the
  publish record's Kafka headers (:func:`record_headers`). It is a :class:`PublishSpan`, exported
  by app/observability/span_export.py, not an SDK span: the SDK's per-span work cost about a third
  of a publish's CPU; the worker's spans are the SDK's.
- The control agent's ``decide`` span continues the record's trace (:func:`context_from_headers`).
  The control agent sends its outputs batched, many items per Kafka record (streams/outbox.py),
  so each delivery and incident item carries the decision span's ``traceparent`` as a field of
  its own (:data:`ITEM_FIELD`), kept on its retries.
- The trace id is in the event's trace (its ``accepted`` step) and bound in the log lines
  (``trace_id``) written meanwhile.

Exported by OTLP over HTTP (protobuf) when an endpoint is set: ``TOCSIN_OTLP_ENDPOINT`` (a base
URL, spans go to ``{url}/v1/traces``), else the standard ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_ENDPOINT``; ``OTEL_SDK_DISABLED=true`` turns it off whatever is set. Off,
nothing is set up (no SDK, no provider, no exporter thread) and the hot paths only read
:data:`enabled`: no span, no header written or read.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import functools
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from random import getrandbits
from types import TracebackType
from typing import Any

import structlog

HEADER = "traceparent"
ITEM_FIELD = "traceparent"  # on the delivery and incident items the control agent sends
PUBLISH_ROUTE = "/v1/organizations/{org_id}/workflow_topics/{topic}/publish"

enabled = False  # read on every hot path: False costs one global lookup
_tracer: Any = None
_provider: Any = None
_ratio = 1.0  # TOCSIN_TRACE_SAMPLE_RATIO
_batcher: Any = None  # the API's span_export.SpanBatcher
SCOPE = "tocsin"  # the instrumentation scope of every span


def endpoint(otlp_endpoint: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """The OTLP/HTTP traces URL spans are exported to (``TOCSIN_OTLP_ENDPOINT``, else the standard
    variables), or None (tracing off)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if otlp_endpoint:
        return otlp_endpoint.rstrip("/") + "/v1/traces"
    if traces := environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip():
        return traces
    if base := environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        return base.rstrip("/") + "/v1/traces"
    return None


def setup(otlp_endpoint: str, sample_ratio: float, service: str) -> bool:
    """Export this process's spans when an endpoint is set (:func:`endpoint`), starting a trace for
    ``sample_ratio`` of the publishes (:func:`traced`); whether it is on. The service name is
    ``OTEL_SERVICE_NAME`` or ``tocsin-<service>``."""
    global enabled, _tracer, _provider, _ratio, _batcher
    url = endpoint(otlp_endpoint)
    if url is None:
        return False
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from app.observability.span_export import SpanBatcher

    name = os.environ.get("OTEL_SERVICE_NAME") or f"tocsin-{service}"
    resource = Resource.create({SERVICE_NAME: name})
    provider = TracerProvider(resource=resource)  # flushed at exit
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    trace.set_tracer_provider(provider)
    _provider, _tracer, enabled = provider, provider.get_tracer(SCOPE), True
    _ratio = sample_ratio
    if service == "api":  # its publish spans (PublishSpan) skip the SDK: app/observability/span_export.py
        batcher = SpanBatcher(url, resource.attributes, SCOPE)
        atexit.register(batcher.shutdown)
        _batcher = batcher
        set_sink(batcher.append)
    return True


def traced(traceparent: bytes | None, random: Callable[[], float] = random.random) -> bool:
    """Whether the API traces this publish (tracing on), whose request's ``traceparent`` header is
    given (None: it has none): always when the caller sent one (its sampled flag then decides, as
    the SDK's parent-based sampler does), else for ``TOCSIN_TRACE_SAMPLE_RATIO`` of them, decided
    here before any span work: an untraced publish costs a random number, its record has no trace
    header and the worker traces nothing."""
    return _ratio >= 1.0 or traceparent is not None or random() < _ratio


def shutdown() -> None:
    """Export what is left and stop (tests; a process exiting does it by itself)."""
    global enabled, _tracer, _provider, _batcher
    if _batcher is not None:
        atexit.unregister(_batcher.shutdown)
        _batcher.shutdown()
        set_sink(None)
    if _provider is not None:
        _provider.shutdown()
    _provider, _tracer, _batcher, enabled = None, None, None, False


@functools.cache
def _propagator() -> Any:
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator()


def trace_id_of(span: Any) -> str:
    """The span's trace id as 32 hex digits (as W3C ``traceparent`` and the OTLP backends show it)."""
    return f"{span.get_span_context().trace_id:032x}"


def traceparent_of(span: Any) -> str:
    """The W3C ``traceparent`` that makes a span the parent of another process's span."""
    ctx = span.get_span_context()
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def context_from_traceparent(value: str | bytes | None) -> Any:
    """The OpenTelemetry context a ``traceparent`` value continues (an empty one if it is invalid)."""
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return _propagator().extract({HEADER: value} if value else {})


def context_from_headers(headers: Iterable[tuple[str, bytes]] | Mapping[str, bytes] | None) -> Any:
    """The context of a Kafka record's valid ``traceparent`` header (pairs of name and bytes, or a
    mapping); None without one (the record is not traced)."""
    if not headers:
        return None
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    for name, value in pairs:
        if name == HEADER:
            from opentelemetry.trace import get_current_span

            context = context_from_traceparent(bytes(value))
            return context if get_current_span(context).get_span_context().is_valid else None
    return None


def forwarded(headers: Iterable[tuple[str, bytes]] | Mapping[str, bytes] | None) -> list[tuple[str, bytes]]:
    """The trace headers of a record, for the record forwarded in its place (the idempotency agent)."""
    if not headers:
        return []
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(name, bytes(value)) for name, value in pairs if name in (HEADER, "tracestate")]


def record_headers() -> list[tuple[str, bytes]]:
    """The Kafka headers carrying the current span's context ([] outside a span or when off):
    ``traceparent`` formatted here (the propagator's generic carrier costs more per publish), and
    ``tracestate`` when the span has one. In the API's publish span (:func:`server_span`), its own
    header, made once."""
    if not enabled:
        return []
    publish = _publish_headers.get()
    if publish is not None:
        return list(publish)
    from opentelemetry.trace import get_current_span

    ctx = get_current_span().get_span_context()
    if not ctx.is_valid:
        return []
    headers = [(HEADER, f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}".encode())]
    if ctx.trace_state:
        headers.append(("tracestate", ctx.trace_state.to_header().encode("latin-1")))
    return headers


def publish_headers() -> tuple[tuple[str, bytes], ...]:
    """The Kafka headers of the API's publish span current in this task (:class:`PublishSpan`),
    () outside one: what its publish records carry."""
    return _publish_headers.get() or ()


# The record headers of the publish span current in this task (PublishSpan), read by record_headers.
_publish_headers: contextvars.ContextVar[tuple[tuple[str, bytes], ...] | None] = contextvars.ContextVar(
    "tocsin_publish_headers", default=None
)


def _drop(span: PublishSpan) -> None:
    """The sink without an exporter (tests that look at the span only)."""


_sink: Callable[[PublishSpan], None] = _drop


def set_sink(sink: Callable[[PublishSpan], None] | None) -> None:
    """Where finished publish spans go (the API's SpanBatcher; a list in tests); None: nowhere."""
    global _sink
    _sink = sink if sink is not None else _drop


class PublishSpan:
    """The API's span of one publish request: a SERVER span continuing the caller's
    ``traceparent`` (if any), current in its task while the request is served (its header is what
    :func:`record_headers` gives), its trace id bound to the log lines. Exported as the SDK would
    export its span (same ids, kind, attributes, resource and scope; an exception leaving it is an
    ``exception`` event and an error status), but without the SDK's per-span machinery: ids drawn as
    its RandomIdGenerator draws them, attributes set as they are, and the finished span handed to
    the sink (app/observability/span_export.py) -- the cost a publish carries with every publish
    traced (``make bench``, section ``tracing``)."""

    __slots__ = (
        "_token",
        "attributes",
        "common",
        "end_ns",
        "error",
        "flags",
        "name",
        "parent_span_id",
        "span_id",
        "start_ns",
        "trace_id",
    )

    def __init__(self, name: str, common: tuple[tuple[str, Any], ...], parent: tuple[int, int, int] | None) -> None:
        self.name = name
        # the attributes it starts with, shared by many spans (the exporter encodes them once), and
        # those set later (set_attribute)
        self.common = common
        self.attributes: dict[str, Any] = {}
        if parent is None:
            trace_id = getrandbits(128)
            while not trace_id:  # all zero is invalid (W3C)
                trace_id = getrandbits(128)
            self.trace_id, self.parent_span_id, self.flags = trace_id, 0, 1  # sampled
        else:
            self.trace_id, self.parent_span_id, self.flags = parent
        span_id = getrandbits(64)
        while not span_id:
            span_id = getrandbits(64)
        self.span_id = span_id
        self.error: tuple[str, str] | None = None
        self.end_ns = 0
        self.start_ns = time.time_ns()

    def __enter__(self) -> PublishSpan:
        traceparent = b"00-%032x-%016x-%02x" % (self.trace_id, self.span_id, self.flags)
        self._token = _publish_headers.set(((HEADER, traceparent),))
        if self.flags & 1:
            structlog.contextvars.bind_contextvars(trace_id=f"{self.trace_id:032x}")
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.end_ns = time.time_ns()
        _publish_headers.reset(self._token)
        if exc is not None and kind is not None and not isinstance(exc, GeneratorExit):
            self.error = (kind.__qualname__, str(exc))
        if self.flags & 1:  # a caller's unsampled trace is continued, not recorded (ParentBased)
            _sink(self)

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def is_recording(self) -> bool:
        return bool(self.flags & 1) and not self.end_ns

    def get_span_context(self) -> Any:
        from opentelemetry.trace import SpanContext, TraceFlags

        return SpanContext(self.trace_id, self.span_id, is_remote=False, trace_flags=TraceFlags(self.flags))


def server_span(name: str, traceparent: bytes | None, org_id: str, topic: str) -> PublishSpan:
    """The API's span of one publish request (a context manager: :class:`PublishSpan`), continuing
    the request's ``traceparent`` header (None: it has none; the fast path's header loop finds it)."""
    parent = _remote_parent(bytes(traceparent)) if traceparent is not None else None
    common = (("http.route", PUBLISH_ROUTE), ("tocsin.organization_id", org_id), ("tocsin.topic", topic))
    return PublishSpan(name, common, parent)


def _remote_parent(value: bytes) -> tuple[int, int, int] | None:
    """A caller's valid ``traceparent`` as (trace id, span id, flags), read by the W3C propagator;
    None when it is not valid (a new trace starts, as the SDK does)."""
    from opentelemetry.trace import get_current_span

    ctx = get_current_span(context_from_traceparent(value)).get_span_context()
    return (ctx.trace_id, ctx.span_id, int(ctx.trace_flags)) if ctx.is_valid else None


@contextlib.contextmanager
def child_span(name: str, parent: Any, kind: str, attributes: Mapping[str, Any]) -> Iterator[Any]:
    """A span continuing ``parent`` (a context from :func:`context_from_headers` or
    :func:`context_from_traceparent`), current inside the block; its trace id bound to the log
    lines meanwhile. ``kind``: ``consumer``, ``client`` or ``internal``."""
    from opentelemetry.trace import SpanKind

    with (
        _tracer.start_as_current_span(
            name, context=parent, kind=SpanKind[kind.upper()], attributes=dict(attributes)
        ) as span,
        structlog.contextvars.bound_contextvars(trace_id=trace_id_of(span)),
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

    span = _tracer.start_span(
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
    return child_span(f"deliver {kind}", context_from_traceparent(item[ITEM_FIELD]), "client", attributes)


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
        traceparent = action.get(ITEM_FIELD)
        if traceparent:
            attributes = {
                "tocsin.event_id": action["event_id"],
                "tocsin.organization_id": action["organization_id"],
                "tocsin.effect_id": action["effect_id"],
                "tocsin.decision": str(action.get("decision") or "NOTIFY"),
            }
            timed_span("incident", context_from_traceparent(traceparent), start_ns, end_ns, attributes)
