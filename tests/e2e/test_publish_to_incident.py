"""End to end over HTTP against the real broker: publish → control → workflow → incident."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.support.effects import entries_per_event, listen, sink_totals
from tests.support.scaling import decision_lines
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


def test_publish_creates_incident_with_trace(stack_factory: Callable[..., Stack], fresh_database: str | None) -> None:
    stack = stack_factory(database_url=fresh_database).start()
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
            # the trace sink (accepted, control, workflows) and the incident sink (action:…) write
            # their steps separately: wait for both
            names = {s["step"] for s in body.get("steps", [])} if r.status_code == 200 else set()
            done = "control" in names and any(n.startswith("action:") for n in names)
            return body if done else None

        steps = {s["step"]: s for s in wait_for(trace, 30, "the event trace")["steps"]}
        assert steps["control"]["decision"] == "NOTIFY"
        [considered] = steps["workflows"]["workflows"]
        assert considered["workflow_id"] == ids["workflow"] and considered["mode_matched"] is True
        assert considered["actions"][0]["outcome"] == "requested"


def test_drill_publish_does_not_run_actual_workflow(
    stack_factory: Callable[..., Stack], fresh_database: str | None
) -> None:
    # One partition: the incident sink takes the DRILL's actions (if any) before the ACTUAL's, so
    # once the ACTUAL publish's incident is stored, a DRILL incident would be stored too.
    stack = stack_factory(partitions=1, database_url=fresh_database).start()
    with stack.client() as client:
        setup_incident_workflow(client)
        drill = client.post("/workflow_topics/quake/publish", json={"status": "DRILL", "data": {}})
        assert drill.status_code == 202
        event_id = drill.json()["id"]
        actual = client.post("/workflow_topics/quake/publish", json={"status": "ACTUAL", "data": {}})
        assert actual.status_code == 202
        trace = wait_for(
            lambda: (r := client.get(f"/events/{event_id}")).status_code == 200 and r.json(), 60, "the trace"
        )
        workflows = {s["step"]: s for s in trace["steps"]}["workflows"]["workflows"]
        assert [(w["mode_matched"], w["actions"]) for w in workflows] == [(False, [])], workflows
        [incident] = wait_for(lambda: all_incidents(client), 60, "the ACTUAL publish's incident")
        assert incident["server_event_id"] == actual.json()["id"], "an incident of the DRILL publish"


def test_worker_kill_9_mid_stream_gives_exactly_one_incident_per_event(
    stack_factory: Callable[..., Stack], fresh_database: str | None
) -> None:
    """1000 BYPASS publishes with distinct ``event.id``s, the worker killed with SIGKILL in the
    middle: the effects must be those of an undisturbed run, one incident per event whose
    timeline holds its one CREATED entry. A second effect for an event (a new effect id for a
    redelivered record) would not make a second incident (same ``event.id``: a timeline update),
    so the timeline entries and the sink's ``updated=`` are what is counted."""
    total = 1000
    # The sink commits what it stored every 30 s instead of every 0.5 s: the kill always lands on
    # stored but uncommitted records (with the default a commit could come just before it).
    stack = stack_factory(database_url=fresh_database, extra_env={"TOCSIN_WORKER_COMMIT_SECONDS": "30"}).start()
    with stack.client() as client:
        setup_incident_workflow(client)
    sent: dict[str, str] = {}  # publisher event.id → server event id
    failures: list[str] = []

    def publish_all() -> None:
        with stack.client() as c:
            for i in range(total):
                r = c.post(
                    "/workflow_topics/quake/publish",
                    json={"status": "ACTUAL", "data": {"i": i}, "event": {"id": f"ev-{i}", "name": f"event {i}"}},
                )
                if r.status_code == 202:
                    sent[f"ev-{i}"] = r.json()["id"]
                else:
                    failures.append(f"ev-{i}:{r.status_code}")

    publisher = threading.Thread(target=publish_all)
    publisher.start()
    with stack.client() as client:
        # Kill the moment the sink has stored a batch (its log line is written after the
        # database commit): the batch's offsets are not committed yet (30 s commit interval),
        # while publishes keep arriving.
        log = stack.worker_logs[0]
        wait_for(lambda: sink_totals([log])["created"] >= 100, 120, "the worker to store some incidents", interval=0.05)
        stored = sink_totals([log])["created"]
        wait_for(lambda: sink_totals([log])["created"] > stored, 60, "the next stored batch", interval=0.005)
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

        wait_for(complete, 180, f"{total} incidents")
        # The set is complete: keep listening a little for late duplicates, then count everything.
        incidents = listen(lambda: all_incidents(client))
        assert len(incidents) == total
        assert len({i["id"] for i in incidents}) == total
        assert sorted(i["event_id"] for i in incidents) == sorted(f"ev-{i}" for i in range(total))

    # The whole multiset of timeline entries equals an undisturbed run's: one CREATED per event.
    entries = entries_per_event(stack)
    undisturbed = Counter({(f"ev-{i}", "CREATED"): 1 for i in range(total)})
    extra = entries - undisturbed
    assert entries == undisturbed, (
        f"timeline entries beyond one CREATED per event: {sorted(extra.items(), key=str)[:5]}"
    )
    totals = sink_totals(stack.worker_logs)
    assert (totals["created"], totals["updated"]) == (total, 0), totals
    # Every decision logged for an accepted event (twice when redelivered and decided again) is NOTIFY.
    decided = decision_lines(stack.worker_logs)
    assert {e: d for e in sent.values() if set(d := decided.get(e, [])) != {"NOTIFY"}} == {}

    reprocessed_dupes = sink_totals(stack.worker_logs[1:])["duplicates"]
    decided_again = sum(1 for e in sent.values() if len(decided[e]) > 1)
    print(
        f"\nkill -9 after {killed_at} publishes accepted; sinks: {totals}; records decided again after the "
        f"restart: {decided_again}; their effects deduplicated by the restarted worker: {reprocessed_dupes}; "
        f"timeline entries {sum(entries.values())} (one CREATED per event)"
    )
    assert reprocessed_dupes > 0, (
        "no record was processed twice: the kill came right after an offset commit, "
        "so this run did not exercise deduplication"
    )
