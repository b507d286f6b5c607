"""A publisher reads the traces of its topic's events, and nothing more (issue 39, item B; docs/api.md
"A publisher reads its events' traces"): ``workflow_publisher`` holds ``organization.event:get``, and
``GET …/events/{id}`` grants it on the event's topic's names as well as on the event's own. A service
account bound to that role on one topic could publish but not read what became of its event
(``tocsin events show`` answered 403)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from devstack.kafka import LocalKafka
from tests.support.db import insert_trace
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("publisher-traces"), kafka.bootstrap, database_url=database)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


def token_of(owner: httpx.Client, resource: str, role_id: str) -> str:
    account = owner.post("/service_accounts", json={"name": f"publisher {uuid.uuid4().hex[:6]}"}).json()["id"]
    r = owner.put(f"/service_accounts/{account}/iam", json={"bindings": [{"resource": resource, "role_id": role_id}]})
    assert r.status_code == 200, r.text
    token: str = owner.post(f"/service_accounts/{account}/access_tokens", json={}).json()["access_token"]
    return token


@pytest.fixture(scope="module")
def world(api: Stack) -> dict[str, str]:
    """Topics quake and tsunami with an event each, and another organization's quake with one."""
    with api.client() as owner:
        quake = owner.post("/workflow_topics", json={"key": "quake"}).json()["id"]
        tsunami = owner.post("/workflow_topics", json={"key": "tsunami"}).json()["id"]
    other = api.new_organization("Other org")
    with httpx.Client(
        base_url=f"{api.base_url}/v1/organizations/{other['organization_id']}",
        headers={"Authorization": f"Bearer {other['access_token']}"},
    ) as theirs:
        their_quake = theirs.post("/workflow_topics", json={"key": "quake"}).json()["id"]
    now = datetime.now(UTC)
    return {
        "quake": quake,
        "quake_event": insert_trace(api, quake, at=now, partition_key="site-1"),
        "tsunami_event": insert_trace(api, tsunami, at=now),
        "other_org": other["organization_id"],
        "other_event": insert_trace(api, their_quake, at=now, org_id=other["organization_id"]),
    }


def name(api: Stack, spelled: str) -> str:
    return f"crn:tocsin:organizations:{api.org}:workflow_topics/{spelled}"


@pytest.mark.parametrize("bound_on", ["key", "id"])
def test_a_publisher_bound_to_one_topic_reads_its_events_traces(
    api: Stack, world: dict[str, str], bound_on: str
) -> None:
    with api.client() as owner:
        token = token_of(owner, name(api, "quake" if bound_on == "key" else world["quake"]), "workflow_publisher")
    with api.client(token) as c:
        published = c.post("/workflow_topics/quake/publish", json={"status": "ACTUAL", "data": {}})
        assert published.status_code == 202, published.text
        r = c.get(f"/events/{world['quake_event']}")
    assert r.status_code == 200, r.text
    trace = r.json()
    assert trace["id"] == world["quake_event"]
    assert [s["step"] for s in trace["steps"]] == ["accepted", "control"]
    assert trace["steps"][0]["topic_id"] == world["quake"]


def test_a_publisher_reads_no_other_topic_nor_organization_nor_list(api: Stack, world: dict[str, str]) -> None:
    """Another topic's event is answered as one that does not exist (404), as is an id no event has;
    another organization's 404; incidents and the topic's list of events 403."""
    with api.client() as owner:
        token = token_of(owner, name(api, "quake"), "workflow_publisher")
    with api.client(token) as c:
        for event in (world["tsunami_event"], "evt_01zzzzzzzzzzzzzzzzzzzzzzzz"):
            r = c.get(f"/events/{event}")
            assert (r.status_code, r.json()["code"]) == (404, "RES-001"), r.text
        for path in ("/incidents", "/workflow_topics/quake/events", "/workflow_topics/tsunami/events"):
            r = c.get(path)
            assert (r.status_code, r.json()["code"]) == (403, "IAM-001"), (path, r.text)
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        r = c.get(f"{api.base_url}/v1/organizations/{world['other_org']}/events/{world['other_event']}")
    assert (r.status_code, r.json()["code"]) == (404, "RES-001"), r.text


def test_a_role_without_event_get_still_gets_403(api: Stack, world: dict[str, str]) -> None:
    """The rule is the permission on the topic, not the right to publish: a custom role that only
    publishes reads no trace, and is told so (403, not 404)."""
    with api.client() as owner:
        role = {"name": f"publish only {uuid.uuid4().hex[:6]}",
                "policies": [{"permission_id": "organization.workflow_topic:publish", "effect": "allow"}]}  # fmt: skip
        role_id = owner.post("/iam/roles", json=role).json()["id"]
        token = token_of(owner, name(api, "quake"), role_id)
    with api.client(token) as c:
        r = c.get(f"/events/{world['quake_event']}")
    assert (r.status_code, r.json()["code"]) == (403, "IAM-001"), r.text
    assert r.json()["details"] == {"permission": "organization.event:get"}


def test_event_get_on_the_event_or_the_organization_reads_every_trace(api: Stack, world: dict[str, str]) -> None:
    with api.client() as owner:
        viewer = token_of(owner, f"crn:tocsin:organizations:{api.org}", "viewer")
        role = {"name": f"one trace {uuid.uuid4().hex[:6]}",
                "policies": [{"permission_id": "organization.event:get", "effect": "allow"}]}  # fmt: skip
        role_id = owner.post("/iam/roles", json=role).json()["id"]
        one = token_of(owner, f"crn:tocsin:organizations:{api.org}:events/{world['tsunami_event']}", role_id)
    with api.client(viewer) as c:
        for event in (world["quake_event"], world["tsunami_event"]):
            assert c.get(f"/events/{event}").status_code == 200
    with api.client(one) as c:
        assert c.get(f"/events/{world['tsunami_event']}").status_code == 200
        assert c.get(f"/events/{world['quake_event']}").status_code == 404


def test_the_publisher_role_lists_the_permission(api: Stack) -> None:
    with api.client() as owner:
        roles = {r["id"]: r for r in owner.get(f"{api.base_url}/v1/iam/roles").json()["items"]}
    permissions = {p["permission_id"] for p in roles["workflow_publisher"]["policies"]}
    assert permissions == {
        "organization.workflow_topic:get",
        "organization.workflow_topic:publish",
        "organization.event:get",
    }


@pytest.mark.parametrize("event_id", ["evt_", "inc_01kb0000000000000000000000", "evt_" + "z" * 27, "evt_1il0"])
def test_an_id_no_event_can_have_is_no_such_event_after_the_same_checks(
    api: Stack, world: dict[str, str], event_id: str
) -> None:
    """Found from outside: such an id answered "no trace for this event yet", as if it might come.
    It is 404 "no such event"; a caller of another organization or without the permission is
    answered as for any id (404 / 403), so the form tells nothing the checks would not."""
    with api.client() as owner:
        r = owner.get(f"/events/{event_id}")
        assert r.status_code == 404 and r.json()["message"].startswith("no such event"), r.text
        assert owner.get("/events/evt_01kb0000000000000000000000").json()["message"] == "no trace for this event yet"
        role = {"name": f"nothing {uuid.uuid4().hex[:6]}",
                "policies": [{"permission_id": "organization.workflow_topic:publish", "effect": "allow"}]}  # fmt: skip
        nobody = token_of(owner, name(api, "quake"), owner.post("/iam/roles", json=role).json()["id"])
    with api.client(nobody) as c:
        assert c.get(f"/events/{event_id}").status_code == 403
    with httpx.Client(
        base_url=f"{api.base_url}/v1/organizations/{world['other_org']}",
        headers={"Authorization": f"Bearer {api.credentials['access_token']}"},
    ) as elsewhere:
        assert elsewhere.get(f"/events/{event_id}").status_code == 404
