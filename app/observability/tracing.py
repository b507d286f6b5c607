"""OpenTelemetry tracing: one trace per published event, from the publish request (API) through
its Kafka record to the decision (the worker's control agent) and each delivery attempt
(webhook, e-mail, push) and incident creation.

- The API's ``publish`` span is the parent; the publisher adds its W3C ``traceparent`` to the
  publish record's Kafka headers (:func:`record_headers`). It is a :class:`publish_spans.PublishSpan`, exported
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
import logging
import os
import random
import time
from collections.abc import Callable, Mapping
from random import randbytes
from typing import Any

from app.caches import BoundedMemo
from app.observability import publish_spans, span_export
from app.observability.trace_context import (
    HEADER,
    Parent,
    caller_parent,
    item_fields,
)

PUBLISH_ROUTE = "/v1/organizations/{org_id}/workflow_topics/{topic}/publish"

enabled = False  # read on every hot path: False costs one global lookup
_tracer: Any = None
_provider: Any = None
_ratio = 1.0  # TOCSIN_TRACE_SAMPLE_RATIO
# TOCSIN_TRACE_TRUST_CALLERS: False, a caller's traceparent is linked, never obeyed (anyone may send
# one: its sampled flag would switch tracing on in the API and every worker, whatever the ratio)
_trust_callers = False
_batcher: Any = None  # the API's span_batcher.SpanBatcher
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

    from app.observability.span_batcher import SpanBatcher

    name = os.environ.get("OTEL_SERVICE_NAME") or f"tocsin-{service}"
    resource = Resource.create({SERVICE_NAME: name})
    # A caller's malformed traceparent or tracestate starts a new trace: not worth the propagator's
    # warning line per request (anyone can send one).
    for logger in ("opentelemetry.trace.propagation.tracecontext", "opentelemetry.trace.span"):
        logging.getLogger(logger).setLevel(logging.ERROR)
    _ratio, _trust_callers, enabled = sample_ratio, trust_callers, True
    if service == "api":
        # Its publish spans (publish_spans.PublishSpan) skip the SDK (app/observability/span_export.py), and it
        # installs no SDK provider: FastAPI's own spans of the other routes stay non-recording.
        batcher = SpanBatcher(url, resource.attributes, SCOPE)
        atexit.register(batcher.shutdown)
        _batcher = batcher
        publish_spans.set_sink(batcher.append)
        return True
    provider = TracerProvider(resource=resource)  # flushed at exit
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    trace.set_tracer_provider(provider)
    _provider, _tracer = provider, provider.get_tracer(SCOPE)
    return True


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
) -> publish_spans.PublishSpan | None:
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
        publish_spans.set_sink(None)
    if _provider is not None:
        _provider.shutdown()
    _provider, _tracer, _batcher, enabled, _trust_callers = None, None, None, False, False


def tracer() -> Any:
    """The SDK tracer of this process (None while tracing is off): app/observability/worker_spans.py."""
    return _tracer


def record_headers() -> list[tuple[str, bytes]]:
    """The Kafka headers carrying the current span's context ([] outside a span or when off):
    ``traceparent`` formatted here (the propagator's generic carrier costs more per publish), and
    ``tracestate`` when the span has one (:func:`item_fields`). In the API's publish span (:func:`server_span`), its own
    headers, made once."""
    if not enabled:
        return []
    publish = publish_spans.current.get()
    if publish is not None:
        return list(publish.headers) if not publish.end_ns else []
    from opentelemetry.trace import get_current_span

    span = get_current_span()
    if not span.get_span_context().is_valid:
        return []
    # the item fields are named as the W3C headers: traceparent, and tracestate when there is one
    return [(name, value.encode("latin-1")) for name, value in item_fields(span).items()]


def publish_headers() -> tuple[tuple[str, bytes], ...]:
    """The Kafka headers of the API's publish span current in this task (:class:`publish_spans.PublishSpan`),
    () outside one or once it ended: what its publish records carry."""
    span = publish_spans.current.get()
    return span.headers if span is not None and not span.end_ns else ()


def log_trace_id() -> str | None:
    """The trace id the log lines written now name (the API's publish span of this task), if any."""
    span = publish_spans.current.get()
    return None if span is None else span.ids[span_export.TRACE_ID_AT].hex()  # publish_spans.PublishSpan.trace_id


# The next new traces' publish spans, made SPANS_AHEAD at a time with their ids, W3C header and
# encoded OTLP id fields: made in one loop rather than one by one in each request, where the code
# runs cold, they cost the API's traced publish less (``make bench``, section ``tracing``); a request
# only names and starts one (server_span). The ids of all of them are one draw of random bytes, as
# many bits as the SDK's RandomIdGenerator draws for each (128 and 64, from the same generator),
# written out in hexadecimal at once: 0.5 us a span against 1.2 us drawn and formatted one by one.
# Emptied in a forked child, which makes its own: a parent's and its child's spans never share ids.
SPANS_AHEAD = 128
_fresh: list[publish_spans.PublishSpan] = []
_NO_TRACE, _NO_SPAN = bytes(16), bytes(8)  # all zero is invalid (W3C)


def _make_spans() -> None:
    """Make the next SPANS_AHEAD new traces' spans (:data:`_fresh`), fewer if a draw is all zero."""
    drawn = randbytes(24 * SPANS_AHEAD)  # per span: its trace id (16 bytes), then its span id (8)
    digits = drawn.hex().encode("ascii")
    new = publish_spans.PublishSpan.__new__
    for at in range(0, 24 * SPANS_AHEAD, 24):
        trace_id, span_id = drawn[at : at + 16], drawn[at + 16 : at + 24]
        if trace_id == _NO_TRACE or span_id == _NO_SPAN:
            continue
        span = new(publish_spans.PublishSpan)
        span.parent_span_id, span.flags, span.trace_state = 0, 1, ""  # sampled
        span.ids = span_export.id_fields(trace_id, span_id)
        hexed = digits[2 * at : 2 * at + 48]
        span.headers = ((HEADER, b"00-%b-%b-01" % (hexed[:32], hexed[32:])),)
        span.attributes, span.error, span.end_ns = {}, None, 0
        _fresh.append(span)


os.register_at_fork(after_in_child=_fresh.clear)


# The longest organization or topic a span names: a topic's key is at most 200 characters, an id
# shorter; the path of a refused request may hold anything (an attacker's 8,000-character topic).
MAX_PATH_SEGMENT = 200


def server_span(name: str, route: str, parent: Parent | None, org_id: str, topic: str) -> publish_spans.PublishSpan:
    """The API's span of one publish request, not started (a context manager: :class:`publish_spans.PublishSpan`),
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
        return publish_spans.PublishSpan(name, common, parent, encoded)
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
