"""End to end: a CloudEvent sent with the CloudEvents SDK opens an incident, as the publish request
it maps to would (docs/api.md, CloudEvents)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from cloudevents.core.bindings import http as ce_http
from cloudevents.core.v1.event import CloudEvent

from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_binary_and_batch_mode_events_open_incidents(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory().start()
    with stack.client() as client:
        setup_topic(client, "quake", {"type": "BYPASS"})
        binary = ce_http.to_binary_event(
            CloudEvent(attributes={"type": "M6.1 off Miyagi", "source": "/jma", "id": "q-1"}, data={"magnitude": 6.1})
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
