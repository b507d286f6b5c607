"""Two API replicas and two workers on one database (issue 19, item 7): publishes through either
replica are each decided once and open one incident each; a token created through one replica
authenticates on the other; and both workers take part (the partitions split between them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.e2e.test_publish_to_incident import setup_incident_workflow
from tests.support.scaling import decision_lines
from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

EVENTS = 60


def test_two_api_replicas_and_two_workers_share_one_database(
    stack_factory: Callable[..., Stack], fresh_database: str | None
) -> None:
    stack = stack_factory(database_url=fresh_database, extra_env={"TOCSIN_WORKER_COMMIT_SECONDS": "1"}).start()
    stack.start_worker(stack.worker_data_dir("worker-b"))
    stack.wait_worker_ready()
    second = stack.start_api_replica()
    org_path = f"/v1/organizations/{stack.org}"
    with stack.client() as first:
        setup_incident_workflow(first)
        # a token made through the second replica authenticates on the first (one database)
        account = first.get("/service_accounts").json()["items"][0]["id"]
        with httpx.Client(
            base_url=f"{second}{org_path}",
            headers={"Authorization": f"Bearer {stack.credentials['access_token']}"},
            timeout=30,
        ) as via_second:
            made = via_second.post(f"/service_accounts/{account}/access_tokens", json={"name": "replica"})
            assert made.status_code == 201, made.text
            token = made.json()["access_token"]
            accepted: list[str] = []
            for i in range(EVENTS):
                client = first if i % 2 else via_second
                body = {"status": "ACTUAL", "data": {}, "event": {"id": f"q-{i}", "name": f"quake {i}"}}
                r = client.post(
                    "/workflow_topics/quake/publish", json=body, headers={"Authorization": f"Bearer {token}"}
                )
                assert r.status_code == 202, r.text
                accepted.append(r.json()["id"])

        def decided() -> dict[str, Any] | None:
            found = decision_lines(stack.worker_logs)
            return found if all(found.get(e) for e in accepted) else None

        logged = wait_for(decided, 120, "every publish decided")
        assert {e: logged[e] for e in accepted} == {e: ["NOTIFY"] for e in accepted}, "decided more than once"

        def every_incident() -> list[dict[str, Any]] | None:
            found = all_incidents(first)
            return found if len(found) >= EVENTS else None

        incidents = wait_for(every_incident, 120, "an incident per publish")
        assert sorted(i["event_id"] for i in incidents) == sorted(f"q-{i}" for i in range(EVENTS))
    deciders = [log for log in stack.worker_logs if any(e in log.read_text() for e in accepted)]
    assert len(deciders) == 2, "the two workers should share the partitions"
