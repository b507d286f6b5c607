"""End to end: a CloudEvent sent with the CloudEvents SDK opens an incident, as the publish request
it maps to would (docs/api.md, CloudEvents); a CloudEvent with ``tocsinaction: resolve`` and the same
``partitionkey`` resolves it, and one naming nothing open is accepted, changes nothing and says so in
its trace (issue 33's acceptance: every format closes what it opens)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from cloudevents.core.bindings import http as ce_http
from cloudevents.core.v1.event import CloudEvent
from tocsin_client import AuthenticatedClient
from tocsin_client.api.incidents import get_event_trace, list_incidents
from tocsin_client.models import EventTraceOut, PageIncidentOut

from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_binary_and_batch_mode_events_open_incidents(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory().start()
    with stack.client() as client:
        setup_topic(client, "quake", {"type": "BYPASS"})
        binary = ce_http.to_binary_event(
            CloudEvent(
                attributes={"type": "M6.1 off Miyagi", "source": "/jma", "id": "q-1", "partitionkey": "miyagi"},
                data={"magnitude": 6.1},
            )
        )
        url = f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/quake"
        auth = {"Authorization": f"Bearer {stack.credentials['access_token']}"}
        r = httpx.post(f"{url}/publish", content=binary.body, headers={**auth, **binary.headers})
        assert r.status_code == 202, r.text
        second = CloudEvent(attributes={"type": "M5.0 Chiba", "source": "/jma", "id": "q-2"}, data={"magnitude": 5})
        body = b"[" + ce_http.to_structured_event(second).body + b"]"
        headers = {**auth, "Content-Type": "application/cloudevents-batch+json"}
        r = httpx.post(f"{url}/publish:batch", content=body, headers=headers)
        assert r.status_code == 202, r.text

        def both() -> list[dict[str, Any]] | None:
            found = all_incidents(client)
            return found if len(found) == 2 else None

        incidents = wait_for(both, 120, "two incidents")
        assert sorted(i["title"] for i in incidents) == ["M5.0 Chiba", "M6.1 off Miyagi"]
        assert all(i["status"] == "OPEN" for i in incidents)

        # the source ends it: a resolve naming its partition key; then one naming nothing open
        def resolve(key: str, event_id: str) -> str:
            attributes = {
                "type": "over",
                "source": "/jma",
                "id": event_id,
                "partitionkey": key,
                "tocsinaction": "resolve",
            }
            ended = ce_http.to_binary_event(CloudEvent(attributes=attributes, data={}))
            r = httpx.post(f"{url}/publish", content=ended.body, headers={**auth, **ended.headers})
            assert r.status_code == 202, r.text
            server_id: str = r.json()["id"]
            return server_id

        resolve("miyagi", "q-1-end")
        wait_for(
            lambda: {i["title"]: i["status"] for i in all_incidents(client)}["M6.1 off Miyagi"] == "RESOLVED",
            60,
            "the binary-mode event's incident RESOLVED",
        )
        nothing = resolve("never-triggered", "q-3-end")
        # read back through the typed client generated from the OpenAPI document (make client)
        api = AuthenticatedClient(base_url=stack.base_url, token=stack.credentials["access_token"], timeout=30)

        def outcome() -> str | None:
            trace = get_event_trace.sync(stack.org, nothing, client=api)
            steps = [s.additional_properties for s in trace.steps] if isinstance(trace, EventTraceOut) else []
            found = [s["outcome"] for s in steps if str(s.get("step", "")).startswith("action:") and "outcome" in s]
            return found[0] if found else None

        with api:
            assert wait_for(outcome, 60, "the resolve's trace") == "nothing open to resolve"
            page = list_incidents.sync(stack.org, client=api)
            assert isinstance(page, PageIncidentOut)
            assert sorted(i.status.value for i in page.items) == ["OPEN", "RESOLVED"]
