"""Tracing helpers (app/observability/tracing.py): the endpoint settings, the W3C traceparent put
on a Kafka record and read back, the spans continuing it, and nothing at all when off."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from app.observability import logs, publish_spans, trace_context, tracing, worker_spans
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
ROUTE = tracing.PUBLISH_ROUTE


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """Tracing on, into memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "_tracer", provider.get_tracer("test"))
    monkeypatch.setattr(tracing, "enabled", True)
    yield exporter
    provider.shutdown()
    structlog.contextvars.clear_contextvars()


@pytest.fixture
def publishes(spans: InMemorySpanExporter) -> Iterator[list[publish_spans.PublishSpan]]:
    """Tracing on, the API's finished publish spans into a list."""
    finished: list[publish_spans.PublishSpan] = []
    publish_spans.set_sink(finished.append)
    yield finished
    publish_spans.set_sink(None)


def _by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {span.name: span for span in exporter.get_finished_spans()}


def test_the_endpoint_comes_from_tocsin_or_the_standard_variables() -> None:
    assert tracing.endpoint("", {}) is None
    assert tracing.endpoint("http://c:4318/", {}) == "http://c:4318/v1/traces"
    assert tracing.endpoint("", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}) == "http://c:4318/v1/traces"
    both = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t/x"}
    assert tracing.endpoint("", both) == "http://t/x"
    assert tracing.endpoint("http://c:4318", {"OTEL_SDK_DISABLED": "true"}) is None
    assert Settings(otlp_endpoint="http://c:4318").otlp_endpoint == "http://c:4318"


def test_the_publish_span_travels_in_the_record_headers_to_the_decision(spans: InMemorySpanExporter) -> None:
    with tracing.server_span("publish", ROUTE, None, "org_1", "quake") as publish:
        headers = [("tx", b"0/1"), *tracing.record_headers()]
        line = logs._trace_id(None, "info", {"event": "a line of the request"})
    assert [name for name, _ in headers] == ["tx", "traceparent"]
    assert headers[1][1].decode() == trace_context.traceparent_of(publish)
    assert line["trace_id"] == trace_context.trace_id_of(publish), "the trace id is on the request's log lines"
    after = logs._trace_id(None, "info", {"event": "the access line, after the span"})
    assert after["trace_id"] == trace_context.trace_id_of(publish)
    assert logs._trace_id(None, "info", {"trace_id": "bound"})["trace_id"] == "bound"  # the worker's spans bind theirs
    for carried in (headers, dict(headers)):  # Faust gives a record's headers as pairs or as a mapping
        with worker_spans.child_span("decide", worker_spans.context_from_headers(carried), "consumer", {}) as decide:
            item = {"event_id": "evt_1", "organization_id": "org_1", "effect_id": "eff_1"}
            item[trace_context.ITEM_FIELD] = trace_context.traceparent_of(decide)
        with worker_spans.delivery_span("WEBHOOK", item) as attempt:
            worker_spans.attempt_outcome(attempt, 503, None)
        worker_spans.incident_spans([{**item, "decision": "NOTIFY"}], 1, 2)
        got = _by_name(spans)
        assert got["decide"].parent is not None and got["decide"].parent.span_id == publish.get_span_context().span_id
        assert got["decide"].context.trace_id == publish.get_span_context().trace_id
        for name in ("deliver WEBHOOK", "incident"):
            assert got[name].parent is not None and got[name].parent.span_id == got["decide"].context.span_id, name
            assert got[name].context.trace_id == publish.get_span_context().trace_id, name
        assert got["deliver WEBHOOK"].status.status_code is StatusCode.ERROR
        spans.clear()


def test_the_tracestate_goes_with_the_trace_to_the_delivery_and_the_incident(spans: InMemorySpanExporter) -> None:
    """W3C: the vendors' entries of a caller's tracestate go with the whole trace. The record's
    tracestate reached the decision; its delivery and incident items carry it too (they carried
    only the traceparent: their spans had none)."""
    headers = [
        ("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("tracestate", b"congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"),
    ]
    with worker_spans.child_span("decide", worker_spans.context_from_headers(headers), "consumer", {}) as decide:
        fields = trace_context.item_fields(decide)
    assert fields == {
        trace_context.ITEM_FIELD: trace_context.traceparent_of(decide),
        trace_context.STATE_FIELD: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
    }
    item = {"event_id": "evt_1", "organization_id": "org_1", "effect_id": "eff_1", **fields}
    with worker_spans.delivery_span("WEBHOOK", item):
        pass
    worker_spans.incident_spans([item], 1, 2)
    got = _by_name(spans)
    for name in ("deliver WEBHOOK", "incident"):
        assert got[name].parent is not None and got[name].parent.span_id == got["decide"].context.span_id, name
        assert got[name].context.trace_state.to_header() == "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7", name
    spans.clear()
    without = [headers[0]]
    with worker_spans.child_span("decide", worker_spans.context_from_headers(without), "consumer", {}) as decide:
        assert trace_context.item_fields(decide) == {trace_context.ITEM_FIELD: trace_context.traceparent_of(decide)}
    malformed = {**item, trace_context.STATE_FIELD: "not a=valid,,,=state" * 40}
    with worker_spans.delivery_span("WEBHOOK", malformed) as attempt:  # dropped: the trace goes on
        assert attempt.get_span_context().trace_id == 0x0AF7651916CD43DD8448EB211C80319C


def test_a_caller_traceparent_is_continued_and_a_bad_one_starts_a_new_trace(
    publishes: list[publish_spans.PublishSpan],
) -> None:
    caller = trace_context.caller_parent([b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"], None)
    with tracing.server_span("publish", ROUTE, caller, "org_1", "quake") as span:
        assert trace_context.trace_id_of(span) == "0af7651916cd43dd8448eb211c80319c"
    bad = trace_context.caller_parent([b"00-zz-not-a-trace"], None)
    with tracing.server_span("publish", ROUTE, bad, "org_1", "quake") as span:
        assert trace_context.trace_id_of(span) != "0af7651916cd43dd8448eb211c80319c"
    (first, second) = publishes
    assert first.parent_span_id == 0xB7AD6B7169203331, "the caller's span is the parent"
    assert second.parent_span_id == 0, "a new trace: no parent"


def test_a_record_without_a_valid_traceparent_is_not_traced() -> None:
    for headers in (None, [], [("tx", b"0/1")], [("traceparent", b"00-zz-not-a-trace")], {"traceparent": b""}):
        assert worker_spans.context_from_headers(headers) is None, headers
    valid = [("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")]
    assert worker_spans.context_from_headers(valid) is not None


def test_the_sample_ratio_is_decided_before_any_span(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = None  # no traceparent header, or not a valid one (caller_parent)
    from_caller = (0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331, 1, "")
    monkeypatch.setattr(tracing, "_ratio", 1.0)
    assert tracing.traced(plain, random=lambda: 0.999)
    monkeypatch.setattr(tracing, "_ratio", 0.1)
    assert tracing.traced(plain, random=lambda: 0.05)
    assert not tracing.traced(plain, random=lambda: 0.5)
    assert tracing.traced(from_caller, random=lambda: 0.5), "a caller's trace is always continued"
    monkeypatch.setattr(tracing, "_ratio", 0.0)
    assert not tracing.traced(plain, random=lambda: 0.0)


def test_forwarded_keeps_only_the_trace_headers() -> None:
    headers = [("tx", b"0/1"), ("traceparent", b"00-a-b-01"), ("tracestate", b"k=v")]
    assert worker_spans.forwarded(headers) == [("traceparent", b"00-a-b-01"), ("tracestate", b"k=v")]
    assert worker_spans.forwarded(None) == []


def test_off_no_header_and_no_sdk_loaded() -> None:
    """Without an endpoint nothing is set up: no SDK imported, no exporter, no header written."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOCSIN_OTLP"))}
    code = (
        "import sys; from app.settings import Settings; from app.observability import tracing; "
        "s = Settings(); on = tracing.setup(s.otlp_endpoint, s.trace_sample_ratio, 'api'); "
        "print(on, tracing.enabled, tracing.record_headers(), [m for m in sys.modules if 'opentelemetry.sdk' in m])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False [] []"


def test_an_unsampled_caller_trace_is_continued_but_not_recorded(publishes: list[publish_spans.PublishSpan]) -> None:
    """As the SDK's parent-based sampler: the record carries the caller's trace with its flag 00 and
    nothing is exported; the log lines name the caller's trace (as the worker's do), which failed
    before (the API's lines had no trace id, the worker's had it)."""
    caller = trace_context.caller_parent([b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"], None)
    with tracing.server_span("publish", ROUTE, caller, "org_1", "quake") as span:
        ((_, header),) = tracing.record_headers()
        assert not span.is_recording()
        line = logs._trace_id(None, "info", {"event": "a line of the request"})
    assert header.decode().startswith("00-0af7651916cd43dd8448eb211c80319c-") and header.endswith(b"-00")
    assert line["trace_id"] == "0af7651916cd43dd8448eb211c80319c"
    assert publishes == []


VALID = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize(
    "traceparents",
    [
        [b"garbage"],
        [b""],
        [b"00-00000000000000000000000000000000-b7ad6b7169203331-01"],  # all-zero trace id
        [b"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"],  # all-zero span id
        [b"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"],  # version ff
        [b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra"],  # version 00 with more
        [b"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"],  # upper case
        [b"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-" + b"x" * 600],  # over 512 characters
        [b"\xe9\xff-latin-1"],
        [VALID, b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],  # repeated: a new trace (W3C)
        [VALID, VALID],
    ],
)
def test_a_traceparent_that_is_not_one_valid_header_is_no_parent(
    traceparents: list[bytes], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No parent, so with a sample ratio of 0 no trace either: any header value at all used to
    start a sampled trace past the ratio (an outside attacker's finding); and no warning line per
    request (the propagator's, for one over 512 characters)."""
    monkeypatch.setattr(tracing, "enabled", True)
    monkeypatch.setattr(tracing, "_ratio", 0.0)
    for logger in ("opentelemetry.trace.propagation.tracecontext", "opentelemetry.trace.span"):
        monkeypatch.setattr(logging.getLogger(logger), "level", logging.ERROR)  # as setup() sets them
    with caplog.at_level(logging.WARNING):
        assert trace_context.caller_parent(traceparents, [b"congo=t61rcWkgMzE"]) is None
        assert tracing.publish_span("publish", ROUTE, traceparents, None, "org_1", "quake") is None
    assert not caplog.records


def test_a_caller_tracestate_is_kept_on_the_span_and_the_records() -> None:
    """Several tracestate headers combine (RFC 9110); one the propagator refuses is dropped, the
    traceparent still continued. W3C: a tracestate is passed on (an attacker found it dropped)."""
    parent = trace_context.caller_parent([VALID], [b"congo=t61rcWkgMzE", b"rojo=00f067aa0ba902b7"])
    assert parent == (
        0x0AF7651916CD43DD8448EB211C80319C,
        0xB7AD6B7169203331,
        1,
        "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
    )
    assert trace_context.caller_parent([VALID], [b"not a member"]) == (*parent[:3], "")
    assert trace_context.caller_parent([VALID], [b"k=" + b"v" * 600]) == (*parent[:3], "")
    span = tracing.server_span("publish", ROUTE, parent, "org_1", "quake").start()
    try:
        assert dict(tracing.publish_headers())["tracestate"] == b"congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
        assert span.get_span_context().trace_state.to_header() == parent[3]
    finally:
        span.end(202)
        structlog.contextvars.clear_contextvars()
    carried = worker_spans.context_from_headers([("traceparent", VALID), ("tracestate", b"congo=t61rcWkgMzE")])
    from opentelemetry.trace import get_current_span

    assert get_current_span(carried).get_span_context().trace_state.to_header() == "congo=t61rcWkgMzE"


def test_the_organization_and_topic_of_a_span_are_cut_to_what_can_exist() -> None:
    """A refused request's path may hold anything (an attacker's 8,000-character topic went into
    its span whole); a topic key is at most 200 characters."""
    span = tracing.server_span("publish", ROUTE, None, "o" * 8000, "T" * 8000)
    assert dict(span.common)["tocsin.topic"] == "T" * 200 and dict(span.common)["tocsin.organization_id"] == "o" * 200
    assert dict(tracing.server_span("publish", ROUTE, None, "org_1", "k" * 200).common)["tocsin.topic"] == "k" * 200


def test_the_outcome_follows_the_http_server_conventions(publishes: list[publish_spans.PublishSpan]) -> None:
    """4xx: the status code only; 5xx: an error with the error's type and public message, never
    the request's content (a 422's pydantic text used to carry the body into the span); 401: not
    exported at all (anyone could write spans into any trace)."""
    for status, error in ((202, None), (422, ("ValidationError", "request validation failed")), (401, None)):
        span = tracing.server_span("publish", ROUTE, None, "org_1", "quake").start()
        span.end(status, error)
    span = tracing.server_span("publish", ROUTE, None, "org_1", "quake").start()
    span.end(503, ("Unavailable", "the event broker is unavailable"))
    structlog.contextvars.clear_contextvars()
    assert [(p.attributes["http.response.status_code"], p.error) for p in publishes] == [
        (202, None),
        (422, None),
        (503, ("Unavailable", "the event broker is unavailable")),
    ]


def test_the_publish_headers_are_the_current_span_only_inside_it(publishes: list[publish_spans.PublishSpan]) -> None:
    with tracing.server_span("publish", ROUTE, None, "org_1", "quake") as span:
        assert tracing.record_headers() == [("traceparent", trace_context.traceparent_of(span).encode())]
    assert tracing.record_headers() == [], "outside the span, no header"
    assert [p.span_id for p in publishes] == [span.span_id]


def test_new_traces_take_ids_drawn_ahead_each_once() -> None:
    """A new trace's ids come drawn ahead (tracing._make_spans), with their header and encoded fields:
    never all zero, never twice, and the header and the encoding say the span's own ids."""
    from app.observability import span_export

    spans = [tracing.server_span("publish", ROUTE, None, "org_1", "quake") for _ in range(3 * tracing.SPANS_AHEAD + 1)]
    assert len({s.trace_id for s in spans}) == len(spans) and len({s.span_id for s in spans}) == len(spans)
    for span in spans:
        assert span.trace_id and span.span_id and span.parent_span_id == 0 and span.flags == 1
        assert span.headers == (("traceparent", trace_context.traceparent_of(span).encode()),)
        assert span.ids == span_export.encoded_ids(span.trace_id, span.span_id, "", 0)


def test_a_forked_child_draws_its_own_ids() -> None:
    """Ids drawn ahead in a parent are not taken again by a child it forks (a server forking its
    workers): the child empties them and draws its own."""
    if not tracing._fresh:
        tracing._make_spans()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next new trace's id, then exit at once
        try:
            span = tracing.server_span("publish", ROUTE, None, "org_1", "quake")
            os.write(write, f"{span.trace_id:032x}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child = pipe.read().decode()
    assert os.waitpid(pid, 0)[1] == 0
    parent = tracing.server_span("publish", ROUTE, None, "org_1", "quake")
    assert len(child) == 32 and child != f"{parent.trace_id:032x}"


TRACE_ID, SPAN_ID, PARENT_ID = 0x0AF7651916CD43DD8448EB211C80319C, 0x1122334455667788, 0x00F067AA0BA902B7
STATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"  # the caller's tracestate, kept on the span


def _sdk_publish(exception: Exception | None, attributes: dict[str, Any], parent: bool) -> bytes:
    """The publish span as the SDK's own path exports it (start_span, then its OTLP encoder), with
    the ids and times of a PublishSpan so that the two can be compared."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.id_generator import IdGenerator
    from opentelemetry.trace import SpanKind

    class Fixed(IdGenerator):
        def generate_span_id(self) -> int:
            return SPAN_ID

        def generate_trace_id(self) -> int:
            return TRACE_ID

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "tocsin-api"}), id_generator=Fixed())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    common = {"http.route": tracing.PUBLISH_ROUTE, "tocsin.organization_id": "org_1", "tocsin.topic": "quake"}
    carrier = [("traceparent", f"00-{TRACE_ID:032x}-{PARENT_ID:016x}-01".encode()), ("tracestate", STATE.encode())]
    context = worker_spans.context_from_headers(carrier) if parent else None
    span = provider.get_tracer(tracing.SCOPE).start_span(
        "publish", context=context, kind=SpanKind.SERVER, attributes=common, start_time=1000
    )
    span.set_attributes(attributes)
    if exception is not None:
        span.record_exception(exception, timestamp=2000)
        span.set_status(StatusCode.ERROR, f"{type(exception).__qualname__}: {exception}")
    span.end(end_time=2000)
    return bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())


def _same_encoding(
    exception: Exception | None, attributes: dict[str, Any], parent: bool, encoded_common: bool = False
) -> None:
    """Our encoding of a PublishSpan parses to the message the SDK's path gives for the same span;
    ``encoded_common``: its common fields encoded beforehand, as server_span does."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.sdk.resources import Resource

    from app.observability import span_export

    common = (("http.route", tracing.PUBLISH_ROUTE), ("tocsin.organization_id", "org_1"), ("tocsin.topic", "quake"))
    encoded = span_export.common_fields("publish", parent, common) if encoded_common else None
    span = publish_spans.PublishSpan("publish", common, (TRACE_ID, PARENT_ID, 1, STATE) if parent else None, encoded)
    span.start_ns, span.end_ns = 1000, 2000
    span.ids = span_export.encoded_ids(TRACE_ID, SPAN_ID, span.trace_state, span.parent_span_id)
    for key, value in attributes.items():
        span.set_attribute(key, value)
    if exception is not None:
        span.error = (type(exception).__qualname__, str(exception))
    resource = Resource.create({"service.name": "tocsin-api"}).attributes
    ours = ExportTraceServiceRequest.FromString(span_export.encode([span], resource, tracing.SCOPE))
    sdk = ExportTraceServiceRequest.FromString(_sdk_publish(exception, attributes, parent))
    (sdk_span,) = sdk.resource_spans[0].scope_spans[0].spans
    if exception is not None:  # the SDK also records the traceback and whether it escaped
        (event,) = sdk_span.events
        kept = [a for a in event.attributes if a.key in ("exception.type", "exception.message")]
        del event.attributes[:]
        event.attributes.extend(kept)
    assert ours == sdk


@pytest.mark.parametrize("parent", [False, True], ids=["root", "continues a caller and its tracestate"])
@pytest.mark.parametrize("exception", [None, RuntimeError("broker gone"), ValueError("é" * 200)])
def test_a_publish_span_is_encoded_as_the_sdk_encodes_it(exception: Exception | None, parent: bool) -> None:
    """Same ids, kind, flags, times, attributes, resource and scope as the SDK's own path gives
    (app/observability/span_export.py writes the protobuf itself)."""
    _same_encoding(exception, {"tocsin.event_id": "evt_1"}, parent)


@pytest.mark.parametrize("parent", [False, True], ids=["root", "continues a caller and its tracestate"])
def test_an_accepted_publish_span_is_encoded_as_the_sdk_encodes_it(parent: bool) -> None:
    """Its event id and status code only: span_export's template of an accepted publish."""
    from app.observability import span_export

    accepted = {"tocsin.event_id": "evt_1", "http.response.status_code": 202}
    templates = len(span_export._templates)
    _same_encoding(None, accepted, parent, encoded_common=True)
    assert len(span_export._templates) > templates or templates == span_export.COMMON_MAX, "not the template"


@settings(max_examples=300, deadline=None)
@given(
    event_id=st.text(max_size=300),
    status=st.sampled_from([202, 400, 404, 413, 422, 429, 499, 503]),
    parent=st.booleans(),
    times=st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)),
)
def test_the_template_of_an_accepted_publish_writes_what_the_fields_do(
    event_id: str, status: int, parent: bool, times: tuple[int, int]
) -> None:
    """Byte for byte what the field-by-field encoding (the SDK's, above) writes: ids with and without
    a caller's trace and tracestate, event ids of any length (one- and two-byte varints), any
    status, any times."""
    from app.observability import span_export

    common = (("http.route", tracing.PUBLISH_ROUTE), ("tocsin.organization_id", "org_1"), ("tocsin.topic", "quake"))
    span = tracing.server_span("publish", ROUTE, (TRACE_ID, PARENT_ID, 1, STATE) if parent else None, "org_1", "quake")
    assert span.common == common and span.encoded_common is not None
    span.start_ns, span.end_ns = times
    span.set_attribute("tocsin.event_id", event_id)
    span.attributes["http.response.status_code"] = status
    template = span_export.encode_span(span)
    span.encoded_common = None  # field by field
    assert template == span_export.encode_span(span)


_attribute_values = st.one_of(
    st.text(max_size=300),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
)


# the attributes a span starts with (server_span): the API never sets them again later, and the SDK
# would keep only the later value (hypothesis draws these strings from the code)
_COMMON_KEYS = {"http.route", "tocsin.organization_id", "tocsin.topic"}


@settings(max_examples=300, deadline=None)
@given(
    attributes=st.dictionaries(
        st.text(min_size=1, max_size=150).filter(lambda key: key not in _COMMON_KEYS), _attribute_values, max_size=4
    )
)
def test_any_attributes_are_encoded_as_the_sdk_encodes_them(attributes: dict[str, Any]) -> None:
    """Strings of any length (one-byte and longer varints), booleans, 64-bit integers (negative ones
    in ten bytes) and floats."""
    _same_encoding(None, attributes, parent=False)


def test_the_batcher_exports_every_publish_span_to_the_receiver(publishes: list[publish_spans.PublishSpan]) -> None:
    from app.observability.span_batcher import SpanBatcher
    from tests.support.otlp import otlp_receiver
    from tests.support.stack import wait_for

    with otlp_receiver() as (received, base):
        batcher = SpanBatcher(
            f"{base}/v1/traces", {"service.name": "tocsin-api"}, tracing.SCOPE, delay_s=0.05, batch_size=512
        )
        publish_spans.set_sink(batcher.append)
        try:
            ids = []
            for i in range(1300):  # a few full batches of 512 and a partial one
                with tracing.server_span("publish", ROUTE, None, "org_1", "quake") as span:
                    span.set_attribute("tocsin.event_id", f"evt_{i}")
                ids.append(f"{span.trace_id:032x}")
            wait_for(lambda: len(received.snapshot()) == len(ids), 30, "the 1300 spans")
        finally:
            publish_spans.set_sink(None)
            batcher.shutdown()
            structlog.contextvars.clear_contextvars()
        got = received.snapshot()
        assert [s.trace_id for s in got] == ids
        assert {(s.service, s.name, s.kind) for s in got} == {("tocsin-api", "publish", 2)}
        assert got[7].attributes == {
            "http.route": tracing.PUBLISH_ROUTE,
            "tocsin.organization_id": "org_1",
            "tocsin.topic": "quake",
            "tocsin.event_id": "evt_7",
            "http.response.status_code": 200,
        }
        assert received.requests >= 3 and batcher.exported == 1300 and batcher.failed == batcher.dropped == 0


def test_an_unreachable_collector_neither_blocks_nor_fails_a_publish(
    publishes: list[publish_spans.PublishSpan], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing listens on the endpoint: the spans are counted failed (and dropped beyond the queue's
    bound), each publish's span still finishes, and shutdown returns."""
    from app.observability.span_batcher import SpanBatcher
    from devstack.ports import free_port

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")
    url = f"http://127.0.0.1:{free_port()}/v1/traces"
    batcher = SpanBatcher(
        url, {"service.name": "tocsin-api"}, tracing.SCOPE, delay_s=0.01, batch_size=64, max_queue=128
    )
    publish_spans.set_sink(batcher.append)
    try:
        for _ in range(2000):
            with tracing.server_span("publish", ROUTE, None, "org_1", "quake"):
                assert len(tracing.record_headers()) == 1
            assert len(batcher._queue) <= 128, "the queue is bounded"
    finally:
        publish_spans.set_sink(None)
        batcher.shutdown(timeout_s=60)
        structlog.contextvars.clear_contextvars()
    assert not batcher._thread.is_alive()
    assert batcher.exported == 0 and batcher.failed > 0
    assert batcher.failed + batcher.dropped == 2000


def test_a_traced_publish_leaves_no_reference_cycle(spans: InMemorySpanExporter) -> None:
    """Each request's objects are freed by reference counting, not left for the cyclic collector:
    the first version of the log lines' trace id kept the span in the request's context, and the
    span's header token refers to that context (9 unreachable objects a traced request, +20 % API
    CPU per publish under a paced load in `make bench`)."""

    async def publish() -> None:
        span = tracing.publish_span("publish", ROUTE, None, None, "org_1", "quake")
        assert span is not None
        span.set_attribute("tocsin.event_id", "evt_1")
        span.end(202)
        logs._trace_id(None, "info", {"event": "a line of the request"})

    async def many() -> int:
        await asyncio.create_task(publish())  # anything created once
        gc.collect()
        gc.disable()
        try:
            for _ in range(200):
                await asyncio.create_task(publish())
            return gc.collect()
        finally:
            gc.enable()

    ended: list[str] = []
    publish_spans.set_sink(lambda span: ended.append(span.name))  # the spans are dropped, as once exported
    try:
        assert asyncio.run(many()) == 0
    finally:
        publish_spans.set_sink(None)
    assert len(ended) == 201
