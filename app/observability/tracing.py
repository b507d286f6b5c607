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
  its own (:data:`ITEM_FIELD`), with its ``tracestate`` if any (:data:`STATE_FIELD`), kept on its
  retries.
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
import logging
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from random import getrandbits, randbytes
from types import TracebackType
from typing import Any

import structlog

from app.caches import BoundedMemo
from app.observability import span_export

HEADER = "traceparent"
ITEM_FIELD = "traceparent"  # on the delivery and incident items the control agent sends
STATE_FIELD = "tracestate"  # beside it when the decision's trace has a W3C tracestate
PUBLISH_ROUTE = "/v1/organizations/{org_id}/workflow_topics/{topic}/publish"

enabled = False  # read on every hot path: False costs one global lookup
_tracer: Any = None
_provider: Any = None
_ratio = 1.0  # TOCSIN_TRACE_SAMPLE_RATIO
# TOCSIN_TRACE_TRUST_CALLERS: False, a caller's traceparent is linked, never obeyed (anyone may send
# one: its sampled flag would switch tracing on in the API and every worker, whatever the ratio)
_trust_callers = False
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


def setup(otlp_endpoint: str, sample_ratio: float, service: str, *, trust_callers: bool = False) -> bool:
    """Export this process's spans when an endpoint is set (:func:`endpoint`), starting a trace for
    ``sample_ratio`` of the publishes (:func:`traced`); whether it is on. The service name is
    ``OTEL_SERVICE_NAME`` or ``tocsin-<service>``. ``trust_callers``: a caller's traceparent is
    continued and its sampled flag obeyed (:func:`publish_span`), else only linked."""
    global enabled, _tracer, _provider, _ratio, _batcher, _trust_callers
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
    # A caller's malformed traceparent or tracestate starts a new trace: not worth the propagator's
    # warning line per request (anyone can send one).
    for logger in ("opentelemetry.trace.propagation.tracecontext", "opentelemetry.trace.span"):
        logging.getLogger(logger).setLevel(logging.ERROR)
    _ratio, _trust_callers, enabled = sample_ratio, trust_callers, True
    if service == "api":
        # Its publish spans (PublishSpan) skip the SDK (app/observability/span_export.py), and it
        # installs no SDK provider: FastAPI's own spans of the other routes stay non-recording.
        batcher = SpanBatcher(url, resource.attributes, SCOPE)
        atexit.register(batcher.shutdown)
        _batcher = batcher
        set_sink(batcher.append)
        return True
    provider = TracerProvider(resource=resource)  # flushed at exit
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    trace.set_tracer_provider(provider)
    _provider, _tracer = provider, provider.get_tracer(SCOPE)
    return True


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
    context = _valid_context(carrier)
    if context is None:
        return None
    from opentelemetry.trace import get_current_span

    ctx = get_current_span(context).get_span_context()
    return ctx.trace_id, ctx.span_id, int(ctx.trace_flags), ctx.trace_state.to_header() if ctx.trace_state else ""


def _valid_context(carrier: Mapping[str, str]) -> Any:
    """The context the W3C propagator reads from ``carrier`` (``traceparent``, ``tracestate``), or
    None when its traceparent is missing or not valid."""
    from opentelemetry.trace import get_current_span

    context = _propagator().extract(carrier)
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


def traced(parent: Parent | None, random: Callable[[], float] = random.random) -> bool:
    """Whether the API traces this publish (tracing on), whose caller's trace is ``parent``
    (:func:`caller_parent`; None: none, or not valid): always when it continues one (its sampled
    flag then decides, as the SDK's parent-based sampler does), else for
    ``TOCSIN_TRACE_SAMPLE_RATIO`` of them, decided here before any span work: an untraced publish
    costs a random number, its record has no trace header and the worker traces nothing."""
    return _ratio >= 1.0 or parent is not None or random() < _ratio


def publish_span(
    name: str,
    route: str,
    traceparents: list[bytes] | None,
    tracestates: list[bytes] | None,
    org_id: str,
    topic: str,
) -> PublishSpan | None:
    """The started span of a publish request (single or batch), or None when tracing is off or
    this request is not traced (:func:`traced`); the caller ends it with the request's status.

    A caller's trace (its ``traceparent``) is continued, and its sampled flag obeyed, only when the
    operator trusts the callers (TOCSIN_TRACE_TRUST_CALLERS). Else the sampling decision is ours
    (TOCSIN_TRACE_SAMPLE_RATIO): untraced, the record has no trace header and no worker traces it;
    traced, the span starts a trace of ours that links the caller's span."""
    if not enabled:
        return None
    parent = caller_parent(traceparents, tracestates) if traceparents is not None else None
    if parent is not None and not _trust_callers:
        if not traced(None):
            return None
        span = server_span(name, route, None, org_id, topic)
        span.link(parent)
        return span.start()
    if not traced(parent):
        return None
    return server_span(name, route, parent, org_id, topic).start()


def trusts_callers() -> bool:
    """Whether a caller's traceparent is obeyed (TOCSIN_TRACE_TRUST_CALLERS), not only linked."""
    return _trust_callers


def shutdown() -> None:
    """Export what is left and stop (tests; a process exiting does it by itself)."""
    global enabled, _tracer, _provider, _batcher, _trust_callers
    if _batcher is not None:
        atexit.unregister(_batcher.shutdown)
        _batcher.shutdown()
        set_sink(None)
    if _provider is not None:
        _provider.shutdown()
    _provider, _tracer, _batcher, enabled, _trust_callers = None, None, None, False, False


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


def item_fields(span: Any) -> dict[str, str]:
    """What a delivery or incident item carries to continue ``span`` (the decision's): its
    traceparent (:data:`ITEM_FIELD`) and, when its trace has one, its W3C tracestate
    (:data:`STATE_FIELD`): the vendors' entries a caller sent go with the whole trace."""
    fields = {ITEM_FIELD: traceparent_of(span)}
    state = span.get_span_context().trace_state
    if state:
        fields[STATE_FIELD] = state.to_header()
    return fields


def context_of_item(item: Mapping[str, Any]) -> Any:
    """The context an item's trace fields (:func:`item_fields`) continue; an empty one when its
    traceparent is not valid. A tracestate the propagator refuses is dropped."""
    carrier = {HEADER: str(item[ITEM_FIELD])}
    state = item.get(STATE_FIELD)
    if isinstance(state, str) and state:
        carrier["tracestate"] = state
    return _propagator().extract(carrier)


def context_from_headers(headers: Iterable[tuple[str, bytes]] | Mapping[str, bytes] | None) -> Any:
    """The context of a Kafka record's valid ``traceparent`` header, with its ``tracestate``
    (pairs of name and bytes, or a mapping); None without one (the record is not traced)."""
    if not headers:
        return None
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    carrier = {name: bytes(value).decode("latin-1") for name, value in pairs if name in (HEADER, "tracestate")}
    return _valid_context(carrier) if HEADER in carrier else None


def forwarded(headers: Iterable[tuple[str, bytes]] | Mapping[str, bytes] | None) -> list[tuple[str, bytes]]:
    """The trace headers of a record, for the record forwarded in its place (the idempotency agent)."""
    if not headers:
        return []
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(name, bytes(value)) for name, value in pairs if name in (HEADER, "tracestate")]


def record_headers() -> list[tuple[str, bytes]]:
    """The Kafka headers carrying the current span's context ([] outside a span or when off):
    ``traceparent`` formatted here (the propagator's generic carrier costs more per publish), and
    ``tracestate`` when the span has one (:func:`item_fields`). In the API's publish span (:func:`server_span`), its own
    headers, made once."""
    if not enabled:
        return []
    publish = _current.get()
    if publish is not None:
        return list(publish.headers) if not publish.end_ns else []
    from opentelemetry.trace import get_current_span

    span = get_current_span()
    if not span.get_span_context().is_valid:
        return []
    # the item fields are named as the W3C headers: traceparent, and tracestate when there is one
    return [(name, value.encode("latin-1")) for name, value in item_fields(span).items()]


def publish_headers() -> tuple[tuple[str, bytes], ...]:
    """The Kafka headers of the API's publish span current in this task (:class:`PublishSpan`),
    () outside one or once it ended: what its publish records carry."""
    span = _current.get()
    return span.headers if span is not None and not span.end_ns else ()


# The API's publish span of this task (PublishSpan), from its start to the request's end: its record
# headers until it ends (publish_headers), its trace id in the log lines until the request ends (the
# access line comes after the span; formatted as a line is written, not for every publish). The span
# holds no token of it: nothing refers back to this context.
_current: contextvars.ContextVar[PublishSpan | None] = contextvars.ContextVar("tocsin_publish_span", default=None)


def log_trace_id() -> str | None:
    """The trace id the log lines written now name (the API's publish span of this task), if any."""
    span = _current.get()
    return None if span is None else span.ids[span_export.TRACE_ID_AT].hex()  # PublishSpan.trace_id


def _span_id() -> int:
    """A random span id (never all zero)."""
    span_id = getrandbits(64)
    while not span_id:  # all zero is invalid (W3C)
        span_id = getrandbits(64)
    return span_id


# The next new traces' publish spans, made SPANS_AHEAD at a time with their ids, W3C header and
# encoded OTLP id fields: made in one loop rather than one by one in each request, where the code
# runs cold, they cost the API's traced publish less (``make bench``, section ``tracing``); a request
# only names and starts one (server_span). The ids of all of them are one draw of random bytes, as
# many bits as the SDK's RandomIdGenerator draws for each (128 and 64, from the same generator),
# written out in hexadecimal at once: 0.5 us a span against 1.2 us drawn and formatted one by one.
# Emptied in a forked child, which makes its own: a parent's and its child's spans never share ids.
SPANS_AHEAD = 128
_fresh: list[PublishSpan] = []
_NO_TRACE, _NO_SPAN = bytes(16), bytes(8)  # all zero is invalid (W3C)


def _make_spans() -> None:
    """Make the next SPANS_AHEAD new traces' spans (:data:`_fresh`), fewer if a draw is all zero."""
    drawn = randbytes(24 * SPANS_AHEAD)  # per span: its trace id (16 bytes), then its span id (8)
    digits = drawn.hex().encode("ascii")
    new = PublishSpan.__new__
    for at in range(0, 24 * SPANS_AHEAD, 24):
        trace_id, span_id = drawn[at : at + 16], drawn[at + 16 : at + 24]
        if trace_id == _NO_TRACE or span_id == _NO_SPAN:
            continue
        span = new(PublishSpan)
        span.parent_span_id, span.flags, span.trace_state = 0, 1, ""  # sampled
        span.ids = span_export.id_fields(trace_id, span_id)
        hexed = digits[2 * at : 2 * at + 48]
        span.headers = ((HEADER, b"00-%b-%b-01" % (hexed[:32], hexed[32:])),)
        span.attributes, span.error, span.end_ns = {}, None, 0
        _fresh.append(span)


os.register_at_fork(after_in_child=_fresh.clear)


def _drop(span: PublishSpan) -> None:
    """The sink without an exporter (tests that look at the span only)."""


_sink: Callable[[PublishSpan], None] = _drop


def set_sink(sink: Callable[[PublishSpan], None] | None) -> None:
    """Where finished publish spans go (the API's SpanBatcher; a list in tests); None: nowhere."""
    global _sink
    _sink = sink if sink is not None else _drop


class PublishSpan:
    """The API's span of one publish request (single or batch): a SERVER span continuing the
    caller's trace (if any), current in its task from :meth:`start` to :meth:`end` (its headers are
    what :func:`publish_headers` gives), its trace id bound to the log lines. Exported as the SDK
    would export its span (same ids, kind, attributes, trace state, resource and scope), but
    without the SDK's per-span machinery: ids drawn as its RandomIdGenerator draws them,
    attributes set as they are, and the finished span handed to the sink
    (app/observability/span_export.py) -- the cost a publish carries with every publish traced
    (``make bench``, section ``tracing``).

    Its outcome follows OpenTelemetry's HTTP conventions for a server span: the response's status
    code as ``http.response.status_code``, an error status only for a 5xx, described by the error's
    type and the message the caller got (never the request's content). A request refused for its
    credentials (401) is not exported: nobody unauthenticated writes spans into a trace."""

    __slots__ = (
        "attributes",
        "common",
        "encoded_common",
        "end_ns",
        "error",
        "flags",
        "headers",
        "ids",
        "name",
        "parent_span_id",
        "start_ns",
        "trace_state",
    )

    def __init__(
        self,
        name: str,
        common: tuple[tuple[str, Any], ...],
        parent: Parent | None,
        encoded_common: bytes | None = None,
    ) -> None:
        """A span starting now, continuing ``parent`` or a new trace; ``common``: the attributes it
        starts with, shared by many spans, encoded (``encoded_common``, span_export.common_fields)
        once. The API's publishes take theirs made ahead (:func:`server_span`)."""
        if parent is None:
            trace_id = getrandbits(128)
            while not trace_id:  # all zero is invalid (W3C)
                trace_id = getrandbits(128)
            self.identify(trace_id, _span_id(), 0, 1, "")  # sampled
        else:
            trace_id, parent_span_id, flags, state = parent
            self.identify(trace_id, _span_id(), parent_span_id, flags, state)
        self.name, self.common, self.encoded_common = name, common, encoded_common
        self.start_ns = time.time_ns()

    def identify(self, trace_id: int, span_id: int, parent_span_id: int, flags: int, trace_state: str) -> None:
        """Its ids and trace, with the record headers and encoded fields that carry them; no
        attribute set, not ended."""
        self.parent_span_id = parent_span_id
        self.flags, self.trace_state = flags, trace_state
        self.ids = span_export.encoded_ids(trace_id, span_id, trace_state, parent_span_id)
        headers: tuple[tuple[str, bytes], ...] = ((HEADER, b"00-%032x-%016x-%02x" % (trace_id, span_id, flags)),)
        if trace_state:
            headers += (("tracestate", trace_state.encode("latin-1")),)
        self.headers = headers
        self.attributes: dict[str, Any] = {}  # set after it starts
        self.error: tuple[str, str] | None = None
        self.end_ns = 0

    @property
    def trace_id(self) -> int:
        """Its trace id, read from its encoded ids."""
        return int.from_bytes(self.ids[span_export.TRACE_ID_AT])

    @property
    def span_id(self) -> int:
        """Its span id, read from its encoded ids."""
        return int.from_bytes(self.ids[span_export.SPAN_ID_AT])

    def link(self, caller: Parent) -> None:
        """Record a link to the caller's span (its trace id and span id, as the SDK's encoder writes a
        remote link), in a span that starts a trace of ours; before it ends."""
        trace_id, span_id, _flags, _state = caller
        self.ids += span_export.link_field(trace_id, span_id)

    def start(self) -> PublishSpan:
        """Make it the current publish span of this task (its record headers) and the trace of the
        log lines (a caller's unsampled trace too: the lines name the caller's trace)."""
        _current.set(self)
        return self

    def end(self, status: int, error: tuple[str, str] | None = None) -> None:
        """End it with the response's ``status``; ``error``: the type and public message of what
        failed, recorded for a 5xx."""
        self.end_ns = time.time_ns()
        self.attributes["http.response.status_code"] = status
        if status >= 500:
            self.error = error or ("Error", f"status {status}")
        if self.flags & 1 and status != 401:  # a caller's unsampled trace is continued, not recorded
            _sink(self)

    def __enter__(self) -> PublishSpan:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is None:
            self.end(200)
        else:  # only its type: an exception's text may hold the request's content
            self.end(500, (kind.__qualname__, "internal error"))

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def is_recording(self) -> bool:
        return bool(self.flags & 1) and not self.end_ns

    def get_span_context(self) -> Any:
        from opentelemetry.trace import SpanContext, TraceFlags, TraceState

        state = TraceState.from_header([self.trace_state]) if self.trace_state else None
        return SpanContext(
            self.trace_id, self.span_id, is_remote=False, trace_flags=TraceFlags(self.flags), trace_state=state
        )


# The longest organization or topic a span names: a topic's key is at most 200 characters, an id
# shorter; the path of a refused request may hold anything (an attacker's 8,000-character topic).
MAX_PATH_SEGMENT = 200


def server_span(name: str, route: str, parent: Parent | None, org_id: str, topic: str) -> PublishSpan:
    """The API's span of one publish request, not started (a context manager: :class:`PublishSpan`),
    continuing ``parent`` (:func:`caller_parent`). Its organization and topic are those the request's
    path names (the request may be refused for them), cut to :data:`MAX_PATH_SEGMENT` characters."""
    org_id, topic = org_id[:MAX_PATH_SEGMENT], topic[:MAX_PATH_SEGMENT]
    key = (name, route, org_id, topic, parent is not None)
    found = _server_common.get(key)
    if found is None:
        named: tuple[tuple[str, Any], ...] = (
            ("http.route", route),
            ("tocsin.organization_id", org_id),
            ("tocsin.topic", topic),
        )
        found = _server_common.remember(key, (named, span_export.common_fields(name, parent is not None, named)))
    common, encoded = found
    if parent is not None:
        return PublishSpan(name, common, parent, encoded)
    if not _fresh:  # a new trace: a span made ahead (_make_spans), named and started now
        _make_spans()
    span = _fresh.pop()
    span.name, span.common, span.encoded_common = name, common, encoded
    span.start_ns = time.time_ns()
    return span


# The common attributes of the publish spans of a route, organization and topic, and their encoding:
# emptied when it grows past span_export.COMMON_MAX (any path a request names has a span).
_server_common: BoundedMemo[tuple[str, str, str, str, bool], tuple[tuple[tuple[str, Any], ...], bytes]] = BoundedMemo(
    span_export.COMMON_MAX
)


@contextlib.contextmanager
def child_span(name: str, parent: Any, kind: str, attributes: Mapping[str, Any]) -> Iterator[Any]:
    """A span continuing ``parent`` (a context from :func:`context_from_headers` or
    :func:`context_of_item`), current inside the block; its trace id bound to the log
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
        if action.get(ITEM_FIELD):
            attributes = {
                "tocsin.event_id": action["event_id"],
                "tocsin.organization_id": action["organization_id"],
                "tocsin.effect_id": action["effect_id"],
                "tocsin.decision": str(action.get("decision") or "NOTIFY"),
            }
            timed_span("incident", context_of_item(action), start_ns, end_ns, attributes)
