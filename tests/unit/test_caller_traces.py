"""A caller's W3C ``traceparent`` on a publish (issue 30, item 3): the sampling decision is ours
(``TOCSIN_TRACE_SAMPLE_RATIO``), the caller's trace is linked, not obeyed, unless the operator
trusts the callers (``TOCSIN_TRACE_TRUST_CALLERS``). Before, a sampled traceparent from anyone
forced a traced publish in the API and, through the record's header, in every worker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from app.observability import publish_spans, span_export, tracing, worker_spans
from app.settings import Settings

ROUTE = tracing.PUBLISH_ROUTE
CALLER_TRACE, CALLER_SPAN = 0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331
SAMPLED = [f"00-{CALLER_TRACE:032x}-{CALLER_SPAN:016x}-01".encode()]
UNSAMPLED = [f"00-{CALLER_TRACE:032x}-{CALLER_SPAN:016x}-00".encode()]


@pytest.fixture
def publishes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[publish_spans.PublishSpan]]:
    """Tracing on in the API, callers not trusted (the default), finished publish spans in a list."""
    monkeypatch.setattr(tracing, "enabled", True)
    monkeypatch.setattr(tracing, "_trust_callers", False, raising=False)
    finished: list[publish_spans.PublishSpan] = []
    publish_spans.set_sink(finished.append)
    yield finished
    publish_spans.set_sink(None)


def _publish(traceparents: list[bytes] | None) -> publish_spans.PublishSpan | None:
    """What the API's publish does with a request's trace headers: its span, ended as accepted, and
    the trace headers its record carried to the worker."""
    span = tracing.publish_span("publish", ROUTE, traceparents, None, "org_1", "quake")
    if span is not None:
        span.set_attribute("tocsin.event_id", "evt_1")
        span.end(202)
    return span


def _exported(span: publish_spans.PublishSpan) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest.FromString(span_export.encode([span], {"service.name": "tocsin-api"}, "tocsin"))


def test_a_sampled_caller_trace_does_not_switch_tracing_on(
    publishes: list[publish_spans.PublishSpan], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tracing, "_ratio", 0.0)
    span = tracing.publish_span("publish", ROUTE, SAMPLED, None, "org_1", "quake")
    assert span is None, "ratio 0: no publish is traced, whoever asks"
    record = tracing.record_headers()
    assert record == [] and tracing.publish_headers() == (), "the record carries no traceparent"
    assert worker_spans.context_from_headers(record) is None, "so the worker traces nothing for it"
    assert publishes == []


def test_a_caller_trace_is_linked_when_we_trace_the_publish(
    publishes: list[publish_spans.PublishSpan], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ratio 1: traced, in a trace of ours (sampled whatever the caller's flag says), which links the
    caller's span; the record's traceparent is ours."""
    monkeypatch.setattr(tracing, "_ratio", 1.0)
    for caller in (SAMPLED, UNSAMPLED):
        span = tracing.publish_span("publish", ROUTE, caller, None, "org_1", "quake")
        assert span is not None
        headers = dict(tracing.record_headers())
        span.set_attribute("tocsin.event_id", "evt_1")
        span.end(202)
        assert span.trace_id != CALLER_TRACE and span.parent_span_id == 0 and span.flags == 1
        assert headers["traceparent"] == f"00-{span.trace_id:032x}-{span.span_id:016x}-01".encode()
        (exported,) = _exported(span).resource_spans[0].scope_spans[0].spans
        (link,) = exported.links
        assert (link.trace_id.hex(), link.span_id.hex()) == (f"{CALLER_TRACE:032x}", f"{CALLER_SPAN:016x}")
        assert exported.parent_span_id == b"" and exported.trace_id == span.trace_id.to_bytes(16)
    assert len(publishes) == 2, "both recorded: the decision was ours"


def test_a_linked_publish_span_is_encoded_as_the_sdk_encodes_it(publishes: list[publish_spans.PublishSpan]) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags

    span = tracing.publish_span("publish", ROUTE, SAMPLED, None, "org_1", "quake")
    assert span is not None
    span.set_attribute("tocsin.event_id", "evt_1")
    span.end(202)
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "tocsin-api"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    caller = SpanContext(CALLER_TRACE, CALLER_SPAN, is_remote=True, trace_flags=TraceFlags(1))
    attributes = {"http.route": ROUTE, "tocsin.organization_id": "org_1", "tocsin.topic": "quake"}
    sdk = provider.get_tracer(tracing.SCOPE).start_span(
        "publish", kind=SpanKind.SERVER, attributes=attributes, links=[Link(caller)], start_time=span.start_ns
    )
    sdk.set_attributes({"tocsin.event_id": "evt_1", "http.response.status_code": 202})
    sdk.end(end_time=span.end_ns)
    expected = ExportTraceServiceRequest.FromString(encode_spans(memory.get_finished_spans()).SerializeToString())
    (theirs,) = expected.resource_spans[0].scope_spans[0].spans
    theirs.trace_id, theirs.span_id = span.trace_id.to_bytes(16), span.span_id.to_bytes(8)
    ours = _exported(span)
    ours.resource_spans[0].resource.CopyFrom(expected.resource_spans[0].resource)
    assert ours == expected
    provider.shutdown()


def test_trusted_callers_are_obeyed(
    publishes: list[publish_spans.PublishSpan], monkeypatch: pytest.MonkeyPatch
) -> None:
    """TOCSIN_TRACE_TRUST_CALLERS=true (callers inside the operator's own tracing): a caller's trace
    is continued, its sampled flag deciding, as before."""
    monkeypatch.setattr(tracing, "_ratio", 0.0)
    monkeypatch.setattr(tracing, "_trust_callers", True, raising=False)
    span = _publish(SAMPLED)
    assert span is not None and span.trace_id == CALLER_TRACE and span.parent_span_id == CALLER_SPAN
    assert publishes == [span]
    unsampled = _publish(UNSAMPLED)
    assert unsampled is not None and unsampled.flags == 0 and publishes == [span], "continued, not recorded"


def test_callers_are_not_trusted_unless_the_operator_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().trace_trust_callers is False
    monkeypatch.setenv("TOCSIN_TRACE_TRUST_CALLERS", "true")
    assert Settings().trace_trust_callers is True
    monkeypatch.setattr(tracing, "_ratio", tracing._ratio)  # setup sets it; put back after the test
    try:
        assert tracing.setup("http://127.0.0.1:9", 0.5, "api", trust_callers=True)
        assert tracing.trusts_callers()
    finally:
        tracing.shutdown()
    assert not tracing.trusts_callers()
