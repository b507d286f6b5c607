"""End to end with the official ``pagerduty`` client (its ``EventsApiV2Client``) pointed at Tocsin
over local HTTPS (the client refuses anything else; TLS terminated in front of the API with the
tests' own CA): a trigger opens an incident, the same dedup key acknowledges and resolves it, and a
resolve naming nothing open is accepted, changes nothing and says so in its trace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pagerduty
import pytest

from tests.support.stack import Stack, wait_for
from tests.support.tls_proxy import TlsProxy
from tests.support.tls_server import TestCA
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def _status(client: httpx.Client, dedup_key: str) -> str | None:
    found = [i for i in all_incidents(client) if i.get("event_id") == dedup_key]
    return found[0]["status"] if len(found) == 1 else None


def _sink_outcome(client: httpx.Client, event_id: str) -> str | None:
    steps = client.get(f"/events/{event_id}").json().get("steps", [])
    outcomes = [s["outcome"] for s in steps if s.get("step", "").startswith("action:") and "outcome" in s]
    return outcomes[0] if outcomes else None


def test_the_pagerduty_client_opens_acknowledges_and_resolves_an_incident(
    stack_factory: Callable[..., Stack], tmp_path: Path
) -> None:
    stack = stack_factory().start()
    ca = TestCA(tmp_path / "ca")
    with stack.client() as client, TlsProxy(ca, stack.api_port) as proxy:
        setup_topic(client, "pd", {"type": "BYPASS"})
        created = client.post("/workflow_topics/pd/integration_keys", json={"name": "e2e"})
        assert created.status_code == 201, created.text
        routing_key = created.json()["routing_key"]
        with pagerduty.EventsApiV2Client(routing_key, base_url=proxy.base_url, verify=str(ca.ca_file)) as events:
            dedup = events.trigger("disk full on db1", "db1", dedup_key="db1/disk", custom_details={"free": "3%"})
            assert dedup == "db1/disk"
            wait_for(lambda: _status(client, dedup) == "OPEN", 60, "the incident OPEN")
            assert events.acknowledge(dedup) == dedup
            wait_for(lambda: _status(client, dedup) == "ACKNOWLEDGED", 60, "the incident ACKNOWLEDGED")
            assert events.resolve(dedup) == dedup
            wait_for(lambda: _status(client, dedup) == "RESOLVED", 60, "the incident RESOLVED")
            # a resolve naming nothing open: accepted as Events v2 accepts it, nothing changes, the trace says so
            nothing = events.post("/v2/enqueue", json={"event_action": "resolve", "dedup_key": "never-triggered"})
            assert nothing.status_code == 202, nothing.text
            outcome = wait_for(lambda: _sink_outcome(client, nothing.json()["event_id"]), 60, "the resolve's trace")
            assert outcome == "nothing open to resolve"
            # a revoked key: the client's request fails with Events v2's 400
            assert client.delete(f"/workflow_topics/pd/integration_keys/{created.json()['id']}").status_code == 204
            with pytest.raises(pagerduty.HttpError) as refused:
                events.trigger("again", "db1", dedup_key="db1/disk")
            assert refused.value.response.status_code == 400
            assert refused.value.response.json()["errors"] == ["Invalid routing key"]
        assert [i["status"] for i in all_incidents(client)] == ["RESOLVED"]
