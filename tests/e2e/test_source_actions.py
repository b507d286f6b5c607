"""Resolve and acknowledge from the source (issue 33, item 1; API.md): over HTTP against the real
broker and worker, a BYPASS trigger's incident is acknowledged and then resolved by publishes of the
same publisher key, a METRIC episode is ended by a resolve (its release reaching the webhook), and a
resolve that names nothing open is accepted, changes nothing and says so in its trace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.domain.delivery.webhooks import new_secret
from tests.support.receiver import webhook_receiver
from tests.support.stack import Stack, wait_for
from tests.support.workflows import actual_workflow, all_incidents, operation_book

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

METRIC = {"type": "METRIC", "rules": [{"metric_name": "level", "threshold": 10}]}


def _topic(client: httpx.Client, key: str, profile: dict[str, Any] | None, webhook: str) -> None:
    body: dict[str, Any] = {"key": key, "name_en": key}
    if profile is not None:
        body["control_policy_profile"] = profile
    assert client.post("/workflow_topics", json=body).status_code == 201
    actions = [
        {"type": "RUN_OPERATION_BOOK", "operation_book_id": operation_book(client, key)},
        {"type": "SEND_WEBHOOK", "url": f"{webhook}/{key}", "secret": new_secret()},
    ]
    actual_workflow(client, key, f"{key} alert", actions)


def _publish(client: httpx.Client, key: str, **event_control: Any) -> str:
    body: dict[str, Any] = {"status": "ACTUAL", "data": {}, "event": {"name": f"{key} event"}}
    publisher_id = event_control.pop("event_id", None)
    if publisher_id is not None:
        body["event"]["id"] = publisher_id
    if event_control:
        body["event_control"] = event_control
    r = client.post(f"/workflow_topics/{key}/publish", json=body)
    assert r.status_code == 202, r.text
    event_id: str = r.json()["id"]
    return event_id


def _incident_status(client: httpx.Client, key_field: str, value: str) -> str | None:
    found = [i for i in all_incidents(client) if i.get(key_field) == value]
    return found[0]["status"] if len(found) == 1 else None


def _sink_outcome(client: httpx.Client, event_id: str) -> str | None:
    steps = client.get(f"/events/{event_id}").json().get("steps", [])
    outcomes = [s["outcome"] for s in steps if s.get("step", "").startswith("action:") and "outcome" in s]
    return outcomes[0] if outcomes else None


def test_bypass_incident_acknowledged_then_resolved_by_its_source(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory(extra_env={"TOCSIN_ALLOW_PRIVATE_NETWORKS": "true"}).start()
    with webhook_receiver() as (got, base), stack.client() as client:
        _topic(client, "disk", None, base)
        trigger = _publish(client, "disk", event_id="disk-full-web-1")
        wait_for(lambda: _incident_status(client, "event_id", "disk-full-web-1") == "OPEN", 60, "the incident")
        ack = _publish(client, "disk", event_id="disk-full-web-1", action="acknowledge")
        wait_for(lambda: _incident_status(client, "event_id", "disk-full-web-1") == "ACKNOWLEDGED", 60, "acknowledged")
        resolve = _publish(client, "disk", event_id="disk-full-web-1", action="resolve")
        wait_for(lambda: _incident_status(client, "event_id", "disk-full-web-1") == "RESOLVED", 60, "resolved")
        # a resolve of a key with no open incident: accepted, nothing changes, the trace says so
        nothing = _publish(client, "disk", event_id="never-triggered", action="resolve")
        outcome = wait_for(lambda: _sink_outcome(client, nothing), 60, "the resolve's trace")
        assert outcome == "nothing open to resolve"
        assert len(all_incidents(client)) == 1

        def webhooks() -> dict[str, str] | None:
            seen = {body["event_id"]: body["decision"] for _p, _h, body in got.snapshot()}
            return seen if {trigger, resolve, nothing} <= seen.keys() else None

        seen = wait_for(webhooks, 60, "the trigger's and the resolves' webhooks")
        assert (seen[trigger], seen[resolve]) == ("NOTIFY", "RESOLVE")
        assert ack not in seen, "an acknowledge sends nothing"
        assert _sink_outcome(client, ack) is not None and _sink_outcome(client, ack).startswith("acknowledged inc_")


def test_metric_episode_ended_by_a_resolve_from_the_source(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory(extra_env={"TOCSIN_ALLOW_PRIVATE_NETWORKS": "true"}).start()
    with webhook_receiver() as (got, base), stack.client() as client:
        _topic(client, "river", METRIC, base)
        opener = _publish(client, "river", partition_key="gauge-7", metrics={"level": 12})
        wait_for(lambda: _incident_status(client, "partition_key", "gauge-7") == "OPEN", 60, "the episode's incident")
        resolve = _publish(client, "river", partition_key="gauge-7", action="resolve")
        wait_for(lambda: _incident_status(client, "partition_key", "gauge-7") == "RESOLVED", 60, "resolved")

        def control_step() -> dict[str, Any] | None:
            found = [s for s in client.get(f"/events/{resolve}").json().get("steps", []) if s["step"] == "control"]
            return found[0] if found else None

        control = wait_for(control_step, 60, "the resolve's control step")
        assert (control["decision"], control["reason"]) == ("RESOLVE", "resolved by the source")
        assert control["after"]["episode_open"] is False
        seen = wait_for(
            lambda: (lambda s: s if {opener, resolve} <= s.keys() else None)(
                {body["event_id"]: body["decision"] for _p, _h, body in got.snapshot()}
            ),
            60,
            "the NOTIFY's and the release's webhooks",
        )
        assert (seen[opener], seen[resolve]) == ("NOTIFY", "RESOLVE")
        # the next value above the threshold opens a new episode, with a new incident
        _publish(client, "river", partition_key="gauge-7", metrics={"level": 12})
        wait_for(lambda: len(all_incidents(client)) == 2, 60, "a new episode's incident")
