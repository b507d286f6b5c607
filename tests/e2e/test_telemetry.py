"""Logs and traces of the real API and worker (issue 19, items 4 and 6): every line of both logs
is one record in the chosen format, a publish's lines carry its request id, event id and
organization; with an OTLP endpoint set, the publish request, the decision, the webhook attempt
and the incident creation are one trace (seen by a real OTLP/HTTP receiver), whose id is in the
event's trace and on the log lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.domain.delivery.webhooks import new_secret
from tests.support.logs import records
from tests.support.otlp import Span, otlp_receiver
from tests.support.receiver import webhook_receiver
from tests.support.scaling import decision_lines
from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def _setup(client: httpx.Client, key: str, webhook_base: str) -> None:
    """A BYPASS topic whose ACTUAL workflow creates an incident and sends a webhook."""
    assert client.post("/workflow_topics", json={"key": key, "name_en": key}).status_code == 201
    book = client.post("/operation_books", json={"name": key, "incident_title_template": "{event.name}"})
    assert book.status_code == 201, book.text
    workflow = client.post(
        "/workflows",
        json={
            "name": key,
            "topic": key,
            "mode": "ACTUAL",
            "actions": [
                {"type": "RUN_OPERATION_BOOK", "operation_book_id": book.json()["id"]},
                {"type": "SEND_WEBHOOK", "url": f"{webhook_base}/hook", "secret": new_secret()},
            ],
        },
    )
    assert workflow.status_code == 201, workflow.text


CALLER_TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"  # the W3C example, sampled
BATCH_TRACEPARENT = "00-5bf92f3577b34da6a3ce929d0e0e4736-10f067aa0ba902b7-01"
REFUSED_TRACEPARENT = "00-6bf92f3577b34da6a3ce929d0e0e4736-20f067aa0ba902b7-01"
ANONYMOUS_TRACEPARENT = "00-7bf92f3577b34da6a3ce929d0e0e4736-30f067aa0ba902b7-01"


def _publish(
    client: httpx.Client, key: str, request_id: str, headers: dict[str, str] | None = None, **extra: Any
) -> str:
    body = {"status": "ACTUAL", "data": {"v": 1}, "event": {"id": request_id, "name": request_id}, **extra}
    r = client.post(
        f"/workflow_topics/{key}/publish", json=body, headers={"X-Request-ID": request_id, **(headers or {})}
    )
    assert r.status_code == 202, r.text
    assert r.headers["x-request-id"] == request_id, "the caller's safe request id is echoed"
    event_id: str = r.json()["id"]
    return event_id


def _trace_steps(client: httpx.Client, event_id: str) -> dict[str, Any]:
    def get() -> dict[str, Any] | None:
        r = client.get(f"/events/{event_id}")
        if r.status_code != 200:
            return None
        steps = {s["step"]: s for s in r.json()["steps"]}
        return steps if "workflows" in steps else None

    return wait_for(get, 60, f"the trace of {event_id}")


def _every_line_parses(log: Path, fmt: str) -> list[dict[str, Any]]:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    assert lines, f"{log.name} is empty"
    parsed = list(records(log))
    bad = [r["unparsed"] for r in parsed if "unparsed" in r]
    assert bad == [], f"{len(bad)} lines of {log.name} are not records: {bad[:5]}"
    assert all(line.startswith("{") == (fmt == "json") for line in lines), f"{log.name} is not all {fmt}"
    for record in parsed:
        assert {"timestamp", "level", "logger", "event"} <= record.keys(), record
    return parsed


@pytest.mark.parametrize("fmt", ["json", "logfmt"])
def test_every_line_of_both_logs_is_a_record_and_a_publish_carries_its_ids(
    stack_factory: Callable[..., Stack], fmt: str
) -> None:
    env = {"TOCSIN_ACCESS_LOG": "true", "TOCSIN_ALLOW_PRIVATE_NETWORKS": "true"}
    if fmt == "logfmt":  # json is what a file gets by default (auto): the stack's logs are files
        env["TOCSIN_LOG_FORMAT"] = "logfmt"
    stack = stack_factory(extra_env=env).start()
    with webhook_receiver() as (got, base), stack.client() as client:
        _setup(client, "logs", base)
        event_id = _publish(client, "logs", f"rid-{fmt}-1")
        unsafe = client.post(
            "/workflow_topics/logs/publish",
            json={"status": "ACTUAL", "data": {}},
            headers={"X-Request-ID": 'two words "and quotes"'},
        )
        assert unsafe.status_code == 202
        assert unsafe.headers["x-request-id"].startswith("req_"), "an unsafe request id is replaced"
        batch = client.post(
            "/workflow_topics/logs/publish:batch",
            json=[{"status": "ACTUAL", "data": {"v": 2}}],
            headers={"X-Request-ID": f"rid-{fmt}-batch"},
        )
        assert batch.status_code == 202, batch.text
        batch_event = batch.json()["ids"][0]
        wait_for(
            lambda: len(all_incidents(client)) == 3 and len(got.snapshot()) == 3, 60, "the three publishes handled"
        )
        wait_for(lambda: {event_id, batch_event} <= set(decision_lines(stack.worker_logs)), 30, "the decision lines")
    api = _every_line_parses(stack.var_dir / "api.log", fmt)
    worker = _every_line_parses(stack.worker_logs[0], fmt)
    org = stack.org
    access = [r for r in api if r["event"] == "request" and r.get("event_id") == event_id]
    assert len(access) == 1, access
    assert access[0]["request_id"] == f"rid-{fmt}-1" and access[0]["organization_id"] == org
    decisions = [r for r in worker if r["event"] == "decision" and r["event_id"] == event_id]
    assert len(decisions) == 1 and decisions[0]["organization_id"] == org, decisions
    assert decisions[0]["request_id"] == f"rid-{fmt}-1", "the worker's line carries the publish request's id"
    batched = [r for r in worker if r["event"] == "decision" and r["event_id"] == batch_event]
    assert [r["request_id"] for r in batched] == [f"rid-{fmt}-batch"], batched
    assert any(r["logger"].startswith("faust") for r in worker), "Faust's own lines, in the same format"
    assert any(r["logger"].startswith("uvicorn") for r in api), "uvicorn's own lines, in the same format"
    assert "trace_id" not in decisions[0], "tracing is off: no trace id"


def _spans_of(spans: list[Span], trace_id: str) -> dict[str, Span]:
    return {s.name: s for s in spans if s.trace_id == trace_id}


def test_one_trace_from_the_publish_request_to_the_decision_the_webhook_and_the_incident(
    stack_factory: Callable[..., Stack],
) -> None:
    with otlp_receiver() as (received, endpoint), webhook_receiver() as (got, base):
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",  # export every 0.1 s, not 5 s
            "TOCSIN_ACCESS_LOG": "true",
            "TOCSIN_ALLOW_PRIVATE_NETWORKS": "true",
            # the callers' traces below are continued: callers the operator trusts (by default a
            # caller's trace is only linked, tests/unit/test_caller_traces.py)
            "TOCSIN_TRACE_TRUST_CALLERS": "true",
        }
        stack = stack_factory(extra_env=env).start()
        with stack.client() as client:
            _setup(client, "traced", base)
            event_id = _publish(client, "traced", "rid-traced")
            idempotent = _publish(client, "traced", "rid-idem", attributes={"idempotency_key": "k-1"})
            continued = _publish(
                client, "traced", "rid-caller", headers={"traceparent": CALLER_TRACEPARENT, "tracestate": "congo=t61"}
            )
            batch = client.post(
                "/workflow_topics/traced/publish:batch",
                json=[{"status": "ACTUAL", "data": {"v": 2}}, {"status": "ACTUAL", "data": {"v": 3}}],
                headers={"traceparent": BATCH_TRACEPARENT},
            )
            assert batch.status_code == 202, batch.text
            batch_ids = batch.json()["ids"]
            refused = client.post(  # refused for its body: a span without the body's text, and no error
                "/workflow_topics/traced/publish",
                json={"status": "ACTUAL", "data": {}, "event": "card=4111111111111111"},
                headers={"traceparent": REFUSED_TRACEPARENT},
            )
            assert refused.status_code == 422, refused.text
            anonymous = httpx.post(  # no credentials: no span at all
                f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/traced/publish",
                json={"status": "ACTUAL", "data": {}},
                headers={"traceparent": ANONYMOUS_TRACEPARENT},
            )
            assert anonymous.status_code == 401, anonymous.text
            wait_for(lambda: len(got.snapshot()) == 5, 60, "the five webhooks delivered")
            batch_steps = _trace_steps(client, batch_ids[0])
            steps = _trace_steps(client, event_id)
            idem_steps = _trace_steps(client, idempotent)

        def whole(event: str) -> dict[str, Span] | None:
            found = [
                s for s in received.snapshot() if s.name == "publish" and s.attributes.get("tocsin.event_id") == event
            ]
            if not found:
                return None
            spans = _spans_of(received.snapshot(), found[0].trace_id)
            return spans if {"publish", "decide", "deliver WEBHOOK", "incident"} <= spans.keys() else None

        try:
            spans = wait_for(lambda: whole(event_id), 60, "the spans of the publish, decision, webhook and incident")
        except AssertionError as exc:
            seen = sorted((s.service, s.name, s.trace_id[:8]) for s in received.snapshot())
            raise AssertionError(f"{exc}; received {received.requests} exports: {seen}") from None
        root, decide = spans["publish"], spans["decide"]
        assert root.service == "tocsin-api" and root.parent_span_id == "" and root.kind == 2  # SERVER
        assert decide.service == "tocsin-worker" and decide.parent_span_id == root.span_id
        for name in ("deliver WEBHOOK", "incident"):
            assert spans[name].service == "tocsin-worker" and spans[name].parent_span_id == decide.span_id, name
        assert not spans["deliver WEBHOOK"].error and spans["deliver WEBHOOK"].attributes["tocsin.event_id"] == event_id
        # the trace id in the event's trace and in the log lines of both processes
        assert steps["accepted"]["trace_id"] == root.trace_id
        idem = wait_for(lambda: whole(idempotent), 60, "the idempotent publish's spans")
        assert idem["decide"].parent_span_id == idem["publish"].span_id, "the idempotency agent keeps the trace"
        assert idem_steps["accepted"]["trace_id"] == idem["publish"].trace_id
        caller = wait_for(lambda: whole(continued), 60, "the spans of the publish continuing the caller's trace")
        _, caller_trace, caller_span, _ = CALLER_TRACEPARENT.split("-")
        assert caller["publish"].trace_id == caller_trace and caller["publish"].parent_span_id == caller_span
        assert caller["decide"].parent_span_id == caller["publish"].span_id
        assert caller["publish"].trace_state == caller["decide"].trace_state == "congo=t61", "W3C: passed on"
        for name in ("deliver WEBHOOK", "incident"):  # through the delivery and incident items too
            assert caller[name].trace_state == "congo=t61", name
        # a batch: one span for the request, each event's decision its child (an attacker found
        # batches untraced)
        batch_trace = BATCH_TRACEPARENT.split("-")[1]

        def batch_spans() -> list[Span] | None:
            spans = [s for s in received.snapshot() if s.trace_id == batch_trace]
            return spans if len([s for s in spans if s.name == "decide"]) == 2 else None

        spans_of_batch = wait_for(batch_spans, 60, "the batch's span and its two decisions")
        (request,) = [s for s in spans_of_batch if s.name == "publish batch"]
        assert request.parent_span_id == BATCH_TRACEPARENT.split("-")[2] and request.kind == 2
        assert request.attributes["tocsin.event_count"] == 2 and request.attributes["http.response.status_code"] == 202
        assert all(s.parent_span_id == request.span_id for s in spans_of_batch if s.name == "decide")
        assert batch_steps["accepted"]["trace_id"] == batch_trace
        # refused and anonymous requests (another attacker's finding: both exported spans, the
        # first with the body's text in its status message)
        refused_trace, anonymous_trace = REFUSED_TRACEPARENT.split("-")[1], ANONYMOUS_TRACEPARENT.split("-")[1]
        (refused_span,) = wait_for(
            lambda: [s for s in received.snapshot() if s.trace_id == refused_trace] or None, 60, "the 422's span"
        )
        assert refused_span.attributes["http.response.status_code"] == 422 and not refused_span.error
        everything = received.snapshot()
        assert not any("4111111111111111" in f"{s.attributes} {s.status_message}" for s in everything)
        assert not [s for s in everything if s.trace_id == anonymous_trace]
        # the API exports its publish spans only (no FastAPI spans of its other routes)
        assert {s.name for s in everything if s.service == "tocsin-api"} == {"publish", "publish batch"}
        api = list(records(stack.var_dir / "api.log"))
        assert any(r.get("event") == "request" and r.get("trace_id") == root.trace_id for r in api)
        worker = list(records(stack.worker_logs[0]))
        decision = [r for r in worker if r.get("event") == "decision" and r.get("event_id") == event_id]
        assert decision and decision[0]["trace_id"] == root.trace_id
        stack.stop()  # while the receiver listens: the exporters' last flush at exit reaches it
