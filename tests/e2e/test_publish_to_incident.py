"""End to end over HTTP against the real broker: publish → control → workflow → incident."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def setup_incident_workflow(client: httpx.Client, key: str = "quake") -> dict[str, str]:
    topic = client.post("/workflow_topics", json={"key": key, "name_en": "Quake"})
    assert topic.status_code == 201, topic.text
    book = client.post(
        "/operation_books", json={"name": "Quake response", "incident_title_template": "Quake: {event.name}"}
    )
    assert book.status_code == 201, book.text
    workflow = client.post(
        "/workflows",
        json={
            "name": "Quake alert",
            "topic": key,
            "mode": "ACTUAL",
            "actions": [{"type": "RUN_OPERATION_BOOK", "operation_book_id": book.json()["id"]}],
        },
    )
    assert workflow.status_code == 201, workflow.text
    return {"topic": topic.json()["id"], "book": book.json()["id"], "workflow": workflow.json()["id"]}


def test_publish_creates_incident_with_trace(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory().start()
    with stack.client() as client:
        ids = setup_incident_workflow(client)
        accepted = client.post(
            "/workflow_topics/quake/publish",
            json={"status": "ACTUAL", "data": {"magnitude": 6.1}, "event": {"id": "q-1", "name": "M6.1 Tohoku"}},
        )
        assert accepted.status_code == 202, accepted.text
        event_id = accepted.json()["id"]
        assert event_id.startswith("evt_")

        incidents = wait_for(lambda: all_incidents(client), 60, "the incident")
        assert len(incidents) == 1
        incident = incidents[0]
        assert incident["title"] == "Quake: M6.1 Tohoku"
        assert incident["status"] == "OPEN"
        assert incident["event_id"] == "q-1"
        assert incident["server_event_id"] == event_id
        assert incident["workflow_id"] == ids["workflow"]
        assert incident["mode"] == "ACTUAL"

        def trace() -> dict[str, Any] | None:
            r = client.get(f"/events/{event_id}")
            body: dict[str, Any] = r.json()
            done = r.status_code == 200 and any(s["step"].startswith("action:") for s in body["steps"])
            return body if done else None

        steps = {s["step"]: s for s in wait_for(trace, 30, "the event trace")["steps"]}
        assert steps["control"]["decision"] == "NOTIFY"
        [considered] = steps["workflows"]["workflows"]
        assert considered["workflow_id"] == ids["workflow"] and considered["mode_matched"] is True
        assert considered["actions"][0]["outcome"] == "requested"


def test_drill_publish_does_not_run_actual_workflow(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory().start()
    with stack.client() as client:
        setup_incident_workflow(client)
        drill = client.post("/workflow_topics/quake/publish", json={"status": "DRILL", "data": {}})
        assert drill.status_code == 202
        event_id = drill.json()["id"]
        trace = wait_for(
            lambda: (r := client.get(f"/events/{event_id}")).status_code == 200 and r.json(), 60, "the trace"
        )
        workflows = {s["step"]: s for s in trace["steps"]}["workflows"]["workflows"]
        assert [w["mode_matched"] for w in workflows] == [False]
        assert all_incidents(client) == []


_SINK_LINE = re.compile(r"sink=incidents batch=\d+ created=(\d+) updated=(\d+) duplicates=(\d+)")


def _sink_totals(log: Path) -> tuple[int, int]:
    created = duplicates = 0
    for match in _SINK_LINE.finditer(log.read_text(errors="replace")):
        created += int(match.group(1))
        duplicates += int(match.group(3))
    return created, duplicates


def test_worker_kill_9_mid_stream_gives_exactly_one_incident_per_event(
    stack_factory: Callable[..., Stack],
) -> None:
    total = 1000
    stack = stack_factory().start()
    with stack.client() as client:
        setup_incident_workflow(client)
    sent: list[str] = []
    failures: list[str] = []

    def publish_all() -> None:
        with stack.client() as c:
            for i in range(total):
                r = c.post(
                    "/workflow_topics/quake/publish",
                    json={"status": "ACTUAL", "data": {"i": i}, "event": {"id": f"ev-{i}", "name": f"event {i}"}},
                )
                (sent if r.status_code == 202 else failures).append(f"ev-{i}:{r.status_code}")

    publisher = threading.Thread(target=publish_all)
    publisher.start()
    with stack.client() as client:
        # Kill the moment the sink has stored a batch (its log line is written after the
        # database commit): the batch's offsets are acknowledged but, with a 1 s commit
        # interval, almost certainly not yet committed, while publishes keep arriving.
        log = stack.worker_logs[0]
        wait_for(lambda: _sink_totals(log)[0] >= 100, 120, "the worker to store some incidents", interval=0.05)
        stored = _sink_totals(log)[0]
        wait_for(lambda: _sink_totals(log)[0] > stored, 60, "the next stored batch", interval=0.005)
        stack.kill_worker()
        killed_at = len(sent)
        stack.start_worker()
        publisher.join(timeout=300)
        assert not publisher.is_alive()
        assert failures == [], failures[:5]
        assert killed_at < total, "the publisher finished before the kill; the kill was not mid-stream"

        def complete() -> list[dict[str, Any]] | None:
            found = all_incidents(client)
            return found if len(found) >= total else None

        incidents = wait_for(complete, 180, f"{total} incidents")
        assert len(incidents) == total
        assert len({i["id"] for i in incidents}) == total
        assert sorted(i["event_id"] for i in incidents) == sorted(f"ev-{i}" for i in range(total))

    _, reprocessed_dupes = _sink_totals(stack.worker_logs[-1])
    created_first, _ = _sink_totals(stack.worker_logs[0])
    print(
        f"\nkill -9 after {killed_at} publishes accepted; first worker stored {created_first} incidents; "
        f"records processed again after the restart and deduplicated: {reprocessed_dupes}"
    )
    assert reprocessed_dupes > 0, (
        "no record was processed twice: the kill came right after an offset commit, "
        "so this run did not exercise deduplication"
    )
