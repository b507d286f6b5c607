"""Tracing helpers (app/observability/tracing.py): the endpoint settings, the W3C traceparent put
on a Kafka record and read back, the spans continuing it, and nothing at all when off."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from app.observability import tracing
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SCOPE: dict[str, Any] = {"method": "POST", "headers": []}


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
    with tracing.server_span("publish", SCOPE, "org_1", "quake") as publish:
        headers = [("tx", b"0/1"), *tracing.record_headers()]
        bound = structlog.contextvars.get_contextvars()
    assert [name for name, _ in headers] == ["tx", "traceparent"]
    assert headers[1][1].decode() == tracing.traceparent_of(publish)
    assert bound["trace_id"] == tracing.trace_id_of(publish), "the trace id is on the request's log lines"
    for carried in (headers, dict(headers)):  # Faust gives a record's headers as pairs or as a mapping
        with tracing.child_span("decide", tracing.context_from_headers(carried), "consumer", {}) as decide:
            item = {"event_id": "evt_1", "organization_id": "org_1", "effect_id": "eff_1"}
            item[tracing.ITEM_FIELD] = tracing.traceparent_of(decide)
        with tracing.delivery_span("WEBHOOK", item) as attempt:
            tracing.attempt_outcome(attempt, 503, None)
        tracing.incident_spans([{**item, "decision": "NOTIFY"}], 1, 2)
        got = _by_name(spans)
        assert got["decide"].parent is not None and got["decide"].parent.span_id == publish.get_span_context().span_id
        assert got["decide"].context.trace_id == publish.get_span_context().trace_id
        for name in ("deliver WEBHOOK", "incident"):
            assert got[name].parent is not None and got[name].parent.span_id == got["decide"].context.span_id, name
            assert got[name].context.trace_id == publish.get_span_context().trace_id, name
        assert got["deliver WEBHOOK"].status.status_code is StatusCode.ERROR
        spans.clear()


def test_a_caller_traceparent_is_continued_and_a_bad_one_starts_a_new_trace(spans: InMemorySpanExporter) -> None:
    caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    scope = {"method": "POST", "headers": [(b"traceparent", caller.encode())]}
    with tracing.server_span("publish", scope, "org_1", "quake") as span:
        assert tracing.trace_id_of(span) == "0af7651916cd43dd8448eb211c80319c"
    bad = {"method": "POST", "headers": [(b"traceparent", b"00-zz-not-a-trace")]}
    with tracing.server_span("publish", bad, "org_1", "quake") as span:
        assert tracing.trace_id_of(span) != "0af7651916cd43dd8448eb211c80319c"
    (_first, second) = spans.get_finished_spans()
    assert second.parent is None


def test_a_record_without_a_valid_traceparent_is_not_traced() -> None:
    for headers in (None, [], [("tx", b"0/1")], [("traceparent", b"00-zz-not-a-trace")], {"traceparent": b""}):
        assert tracing.context_from_headers(headers) is None, headers
    valid = [("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")]
    assert tracing.context_from_headers(valid) is not None


def test_the_sample_ratio_is_decided_before_any_span(monkeypatch: pytest.MonkeyPatch) -> None:
    plain: dict[str, Any] = {"headers": [(b"accept", b"*/*")]}
    from_caller: dict[str, Any] = {"headers": [(b"traceparent", b"00-0af7-b7ad-01")]}
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
    assert tracing.forwarded(headers) == [("traceparent", b"00-a-b-01"), ("tracestate", b"k=v")]
    assert tracing.forwarded(None) == []


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
