"""End to end with the official ``pagerduty`` client (its ``EventsApiV2Client``) pointed at Tocsin
over local HTTPS (the client refuses anything else; TLS terminated in front of the API with the
tests' own CA): a trigger opens an incident, the same dedup key acknowledges and resolves it, and a
resolve naming nothing open is accepted, changes nothing and says so in its trace.

The Tocsin side (the integration key, the incidents, the trace) is driven through the typed client
generated from the OpenAPI document (clients/python/tocsin-client, ``make client``)."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path

import pagerduty
import pytest
from tocsin_client import AuthenticatedClient
from tocsin_client.api.incidents import get_event_trace, list_incidents
from tocsin_client.api.workflow_topics import create_integration_key, revoke_integration_key
from tocsin_client.models import EventTraceOut, IntegrationKeyCreatedOut, IntegrationKeyIn, PageIncidentOut

from tests.support.stack import Stack, wait_for
from tests.support.tls_proxy import TlsProxy
from tests.support.tls_server import TestCA
from tests.support.workflows import setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def _statuses(api: AuthenticatedClient, org: str) -> dict[str | None, str]:
    page = list_incidents.sync(org, client=api, limit=500)
    assert isinstance(page, PageIncidentOut)
    return {incident.event_id: incident.status.value for incident in page.items}


def _sink_outcome(api: AuthenticatedClient, org: str, event_id: str) -> str | None:
    trace = get_event_trace.sync(org, event_id, client=api)
    if not isinstance(trace, EventTraceOut):
        return None
    steps = [s.additional_properties for s in trace.steps]
    outcomes = [s["outcome"] for s in steps if str(s.get("step", "")).startswith("action:") and "outcome" in s]
    return outcomes[0] if outcomes else None


def test_the_pagerduty_client_opens_acknowledges_and_resolves_an_incident(
    stack_factory: Callable[..., Stack], tmp_path: Path
) -> None:
    stack = stack_factory().start()
    org, ca = stack.org, TestCA(tmp_path / "ca")
    api = AuthenticatedClient(base_url=stack.base_url, token=stack.credentials["access_token"], timeout=30)
    with stack.client() as client, api, TlsProxy(ca, stack.api_port) as proxy:
        setup_topic(client, "pd", {"type": "BYPASS"})
        created = create_integration_key.sync(org, "pd", client=api, body=IntegrationKeyIn(name="e2e"))
        assert isinstance(created, IntegrationKeyCreatedOut), created
        trust = ssl.create_default_context(cafile=str(ca.ca_file))
        with pagerduty.EventsApiV2Client(created.routing_key, base_url=proxy.base_url, verify=trust) as events:
            dedup = events.trigger("disk full on db1", "db1", dedup_key="db1/disk", custom_details={"free": "3%"})
            assert dedup == "db1/disk"
            wait_for(lambda: _statuses(api, org).get(dedup) == "OPEN", 60, "the incident OPEN")
            assert events.acknowledge(dedup) == dedup
            wait_for(lambda: _statuses(api, org).get(dedup) == "ACKNOWLEDGED", 60, "the incident ACKNOWLEDGED")
            assert events.resolve(dedup) == dedup
            wait_for(lambda: _statuses(api, org).get(dedup) == "RESOLVED", 60, "the incident RESOLVED")
            # a resolve naming nothing open: accepted as Events v2 accepts it, nothing changes, the trace says so
            nothing = events.post("/v2/enqueue", json={"event_action": "resolve", "dedup_key": "never-triggered"})
            assert nothing.status_code == 202, nothing.text
            event_id = nothing.json()["event_id"]
            outcome = wait_for(lambda: _sink_outcome(api, org, event_id), 60, "the resolve's trace")
            assert outcome == "nothing open to resolve"
            # a revoked key: the client's request fails with Events v2's 400
            assert revoke_integration_key.sync_detailed(org, "pd", created.id, client=api).status_code == 204
            with pytest.raises(pagerduty.HttpError) as refused:
                events.trigger("again", "db1", dedup_key="db1/disk")
            assert refused.value.response.status_code == 400
            assert refused.value.response.json()["errors"] == ["Invalid routing key"]
        assert _statuses(api, org) == {"db1/disk": "RESOLVED"}
