"""Issue 16, hostile input and isolation over HTTP against a real API process: every number a client
sends fits the pipeline (signed 64-bit integers, finite numbers), no stored body nests deeper than the
publish body may, and one tenant's data never widens into another's."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devstack.kafka import LocalKafka
from tests.support.db import insert_incident
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parents[2]
INT_MAX, INT_MIN = 2**63 - 1, -(2**63)  # what orjson (the worker's records) carries, signed
TOO_BIG = INT_MAX + 1
TOO_SMALL = INT_MIN - 1
JSON = {"content-type": "application/json"}


class World:
    def __init__(self, stack: Stack, other: dict[str, str]) -> None:
        self.stack = stack
        self.other = other

    def other_client(self) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.stack.base_url}/v1/organizations/{self.other['organization_id']}",
            headers={"Authorization": f"Bearer {self.other['access_token']}"},
            timeout=30,
        )


@pytest.fixture(scope="module")
def world(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    stack = Stack(
        tmp_path_factory.mktemp("hostile"), kafka.bootstrap, extra_env={"TOCSIN_MAX_WORKFLOWS_PER_TOPIC": "3"}
    )
    stack.bootstrap()
    out = subprocess.run(
        [sys.executable, "-m", "cli", "bootstrap", "--org", "Other"],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        check=True,
    )
    other = json.loads(out.stdout.decode().strip().splitlines()[-1])
    stack.start_api()
    with stack.client() as c:
        fields = [{"id": "n", "path": "n", "values": [{"value_source": "value", "type": "number", "operators": []}]}]
        assert c.post("/workflow_topics", json={"key": "nums", "fields": fields}).status_code == 201
    yield World(stack, other)
    stack.stop()


@pytest.fixture
def owner(world: World) -> Iterator[httpx.Client]:
    with world.stack.client() as client:
        yield client


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


def _refused(r: httpx.Response, field: str | None = None) -> None:
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["code"] == "VAL-001", body
    if field is not None:
        assert any(f["field"] == field for f in body["details"]["fields"]), body


# --- 1. every number a client sends is one the pipeline can carry ------------------------------------------


@pytest.mark.parametrize("number", [TOO_BIG, TOO_SMALL, 10**40])
def test_publish_out_of_range_integer_in_data_is_422_not_500(owner: httpx.Client, number: int) -> None:
    r = owner.post("/workflow_topics/nums/publish", json={"status": "ACTUAL", "data": {"deep": [{"n": number}]}})
    _refused(r, "data.deep.0.n")


def test_publish_edges_of_the_range_are_accepted(owner: httpx.Client) -> None:
    for number in (INT_MAX, INT_MIN):
        r = owner.post("/workflow_topics/nums/publish", json={"status": "ACTUAL", "data": {"n": number}})
        assert r.status_code == 202, r.text


@pytest.mark.parametrize(
    "body",
    [
        b'{"status": "ACTUAL", "data": {"x": 1e400}}',
        b'{"status": "ACTUAL", "data": {}, "notification": {"data": {"k": 99999999999999999999}}}',
        b'{"status": "ACTUAL", "data": {}, "notification": {"alert": {"options": {"time_to_live": 1e999}}}}',
        b'{"status": "ACTUAL", "data": {}, "event_control": {"partition_key": "p", "metrics": {"m": 1e999}}}',
    ],
)
def test_publish_numbers_the_records_cannot_encode_are_422(owner: httpx.Client, body: bytes) -> None:
    r = owner.post("/workflow_topics/nums/publish", content=body, headers={"content-type": "application/json"})
    _refused(r)


@pytest.mark.parametrize(
    "condition",
    [
        {"field": "n", "operator": "=", "value": TOO_BIG},
        {"field": "n", "operator": "IN", "value": [1, TOO_SMALL]},
        {"field": "n", "operator": "BETWEEN", "value": [0, TOO_BIG]},
        {"field": "n", "operator": ">", "value": 10**30},
    ],
)
def test_workflow_filter_values_out_of_range_are_422(owner: httpx.Client, condition: dict[str, Any]) -> None:
    book = owner.post("/operation_books", json={"name": "b", "incident_title_template": "t"}).json()["id"]
    action = {"type": "RUN_OPERATION_BOOK", "operation_book_id": book}
    body = {"name": "w", "topic": "nums", "mode": "ACTUAL", "actions": [action], "filter": condition}
    _refused(owner.post("/workflows", json=body))


def test_form_answers_and_workflow_patch_refuse_out_of_range_integers(world: World, owner: httpx.Client) -> None:
    incident = insert_incident(world.stack)
    _refused(owner.post(f"/incidents/{incident}/form_answers", json={"answers": {"q": [TOO_BIG]}}), "answers.q.0")
    raw = b'{"answers": {"q": 1e400}}'
    _refused(owner.post(f"/incidents/{incident}/form_answers", content=raw, headers=JSON), "answers.q")
    assert owner.get(f"/incidents/{incident}/form_answers").json()["items"] == []
    book = owner.post("/operation_books", json={"name": "b", "incident_title_template": "t"}).json()["id"]
    action = {"type": "RUN_OPERATION_BOOK", "operation_book_id": book}
    wf = owner.post("/workflows", json={"name": "w", "topic": "nums", "mode": "ACTUAL", "actions": [action]})
    assert wf.status_code == 201, wf.text
    condition = {"field": "n", "operator": "NOT IN", "value": [TOO_SMALL]}
    _refused(owner.patch(f"/workflows/{wf.json()['id']}", json={"filter": condition}))
    assert owner.get(f"/workflows/{wf.json()['id']}").json()["filter"] is None


def test_unauthenticated_hostile_body_is_still_401(world: World) -> None:
    r = httpx.post(
        f"{world.stack.base_url}/v1/organizations/{world.stack.org}/workflow_topics",
        json={"key": "x", "template_variables": [nested(300)]},
    )
    assert r.status_code == 401, r.text


# --- 4. nested form answers break an incident for everyone ------------------------------------------------


def test_nested_form_answers_are_refused_before_storing_and_reads_keep_working(world: World) -> None:
    incident = insert_incident(world.stack)
    with world.stack.client() as owner:
        r = owner.post(f"/incidents/{incident}/form_answers", json={"answers": {"q": nested(280)}})
        _refused(r)
        assert "nested deeper than" in r.text
        listed = owner.get(f"/incidents/{incident}/form_answers")
        assert listed.status_code == 200, listed.text
        assert listed.json()["items"] == []
        # within the publish body's depth (32 levels inside the body's object) it is stored and read back
        ok = owner.post(f"/incidents/{incident}/form_answers", json={"answers": {"q": nested(30)}})
        assert ok.status_code == 201, ok.text
        assert owner.get(f"/incidents/{incident}/form_answers").status_code == 200


def test_nested_workflow_filter_is_refused(owner: httpx.Client) -> None:
    book = owner.post("/operation_books", json={"name": "b", "incident_title_template": "t"}).json()["id"]
    action = {"type": "RUN_OPERATION_BOOK", "operation_book_id": book}
    deep: Any = {"field": "n", "operator": "=", "value": 1}
    for _ in range(300):
        deep = {"not": deep}
    body = {"name": "w", "topic": "nums", "mode": "ACTUAL", "actions": [action], "filter": deep}
    _refused(owner.post("/workflows", json=body))


# --- 3. joining a group bypasses incident visibility -------------------------------------------------------


def _user_with(owner: httpx.Client, org: str, email: str, permissions: list[str]) -> tuple[str, str]:
    user = owner.post("/users", json={"email": email, "display_name": email.split("@")[0]})
    assert user.status_code == 201, user.text
    user_id = user.json()["id"]
    policies = [{"permission_id": p, "effect": "allow"} for p in permissions]
    role = owner.post("/iam/roles", json={"name": f"role-{email}", "policies": policies})
    assert role.status_code == 201, role.text
    bindings = [{"resource": f"crn:tocsin:organizations:{org}", "role_id": role.json()["id"]}]
    assert owner.put(f"/users/{user_id}/iam", json={"bindings": bindings}).status_code == 200
    token = owner.post(f"/users/{user_id}/access_tokens", json={})
    assert token.status_code == 201, token.text
    return user_id, token.json()["access_token"]


GROUP_EDITOR = [
    "organization.group:get",
    "organization.group:update",
    "organization.incident:get",
    "organization.incident:list",
]


def test_joining_a_group_an_incident_has_as_member_needs_to_see_that_incident(
    world: World, owner: httpx.Client
) -> None:
    org = world.stack.org
    editor, token = _user_with(owner, org, "joiner@example.com", GROUP_EDITOR)
    group = owner.post("/groups", json={"name": "responders"}).json()["id"]
    incident = insert_incident(world.stack, member_group_ids=[group])
    with world.stack.client(token) as c:
        assert c.get(f"/incidents/{incident}").status_code == 404, "not a member, no fullaccess"
        r = c.patch(f"/groups/{group}", json={"member_user_ids": [editor]})
        assert (r.status_code, r.json().get("code")) == (403, "IAM-002"), r.text
        assert r.json()["details"]["missing_permissions"] == ["organization.incident:fullaccess"]
        assert c.get(f"/incidents/{incident}").status_code == 404
        assert c.get("/incidents").json()["items"] == []
        plain = owner.post("/groups", json={"name": "plain"}).json()["id"]
        assert c.patch(f"/groups/{plain}", json={"member_user_ids": [editor]}).status_code == 200, "no incidents"
    # the owner (fullaccess) may add them: then the editor is a member and sees it
    assert owner.patch(f"/groups/{group}", json={"member_user_ids": [editor]}).status_code == 200
    with world.stack.client(token) as c:
        assert c.get(f"/incidents/{incident}").status_code == 200


def test_joining_a_group_an_operation_book_names_needs_to_see_its_incidents(world: World, owner: httpx.Client) -> None:
    org = world.stack.org
    editor, token = _user_with(owner, org, "joiner2@example.com", GROUP_EDITOR)
    group = owner.post("/groups", json={"name": "book-responders"}).json()["id"]
    book = owner.post(
        "/operation_books", json={"name": "b", "incident_title_template": "t", "member_group_ids": [group]}
    )
    assert book.status_code == 201, book.text
    with world.stack.client(token) as c:
        r = c.patch(f"/groups/{group}", json={"member_user_ids": [editor]})
        assert (r.status_code, r.json().get("code")) == (403, "IAM-002"), r.text
        assert owner.get(f"/groups/{group}").json()["member_user_ids"] == []


# --- 2. re-activating a stronger account ------------------------------------------------------------------


def test_user_manager_cannot_reactivate_a_stronger_user(world: World, owner: httpx.Client) -> None:
    org = world.stack.org
    strong = owner.post("/users", json={"email": "dormant@example.com", "display_name": "Dormant"}).json()["id"]
    bindings = [{"resource": f"crn:tocsin:organizations:{org}", "role_id": "owner"}]
    assert owner.put(f"/users/{strong}/iam", json={"bindings": bindings}).status_code == 200
    strong_token = owner.post(f"/users/{strong}/access_tokens", json={}).json()["access_token"]
    assert owner.patch(f"/users/{strong}", json={"status": "INACTIVE"}).status_code == 200
    manager = owner.post("/service_accounts", json={"name": "user-manager"}).json()["id"]
    manager_bindings = [{"resource": f"crn:tocsin:organizations:{org}", "role_id": "user_manager"}]
    assert owner.put(f"/service_accounts/{manager}/iam", json={"bindings": manager_bindings}).status_code == 200
    token = owner.post(f"/service_accounts/{manager}/access_tokens", json={}).json()["access_token"]
    with world.stack.client(token) as c:
        r = c.patch(f"/users/{strong}", json={"status": "ACTIVE"})
        assert (r.status_code, r.json().get("code")) == (403, "IAM-002"), r.text
        assert c.patch(f"/users/{strong}", json={"display_name": "Still dormant"}).status_code == 200
        assert c.patch(f"/users/{strong}", json={"status": "INACTIVE"}).status_code == 200, "same value"
    with world.stack.client(strong_token) as c:
        assert c.get("/workflow_topics").json()["code"] == "AUT-003"
    # through a group: a stronger user who is owner by group membership only
    via_group = owner.post("/users", json={"email": "dormant2@example.com", "display_name": "D2"}).json()["id"]
    admins = owner.post("/groups", json={"name": "admins", "member_user_ids": [via_group]}).json()["id"]
    assert owner.put(f"/groups/{admins}/iam", json={"bindings": bindings}).status_code == 200
    assert owner.patch(f"/users/{via_group}", json={"status": "INACTIVE"}).status_code == 200
    with world.stack.client(token) as c:
        r = c.patch(f"/users/{via_group}", json={"status": "ACTIVE"})
        assert (r.status_code, r.json().get("code")) == (403, "IAM-002"), r.text
    assert owner.patch(f"/users/{strong}", json={"status": "ACTIVE"}).status_code == 200


def test_reactivating_or_minting_for_an_incident_member_needs_to_see_its_incidents(
    world: World, owner: httpx.Client
) -> None:
    """A dormant user who is a member of an incident the caller does not see: bringing it back
    (reactivation, a token) shows that incident to whoever holds the token."""
    org = world.stack.org
    member = owner.post("/users", json={"email": "member@example.com", "display_name": "M"}).json()["id"]
    insert_incident(world.stack, member_user_ids=[member])
    assert owner.patch(f"/users/{member}", json={"status": "INACTIVE"}).status_code == 200
    _manager, token = _user_with(
        owner, org, "manager@example.com", ["organization.user:*", "organization.user.access_token:*"]
    )
    with world.stack.client(token) as c:
        r = c.patch(f"/users/{member}", json={"status": "ACTIVE"})
        assert (r.status_code, r.json().get("code")) == (403, "IAM-002"), r.text
        minted = c.post(f"/users/{member}/access_tokens", json={})
        assert (minted.status_code, minted.json().get("code")) == (403, "IAM-002"), minted.text
    assert owner.patch(f"/users/{member}", json={"status": "ACTIVE"}).status_code == 200


# --- 7. ids from elsewhere ----------------------------------------------------------------------------------


def _foreign_ids(world: World) -> tuple[str, str]:
    with world.other_client() as other:
        user = other.post("/users", json={"email": f"foreign-{uuid.uuid4().hex[:8]}@example.com", "display_name": "F"})
        assert user.status_code == 201, user.text
        group = other.post("/groups", json={"name": f"foreign-{uuid.uuid4().hex[:8]}"})
        assert group.status_code == 201, group.text
        return user.json()["id"], group.json()["id"]


def test_operation_book_members_are_the_organizations_own(world: World, owner: httpx.Client) -> None:
    foreign_user, foreign_group = _foreign_ids(world)
    mine = owner.post("/users", json={"email": "own@example.com", "display_name": "Own"}).json()["id"]
    for users, groups, field in [
        ([foreign_user], [], "member_user_ids"),
        ([], [foreign_group], "member_group_ids"),
        (["usr_doesnotexist"], [], "member_user_ids"),
        ([mine], ["grp_doesnotexist"], "member_group_ids"),
    ]:
        body = {"name": "b", "incident_title_template": "t", "member_user_ids": users, "member_group_ids": groups}
        r = owner.post("/operation_books", json=body)
        _refused(r, field)
    ok = owner.post("/operation_books", json={"name": "b", "incident_title_template": "t", "member_user_ids": [mine]})
    assert ok.status_code == 201, ok.text


def test_push_recipients_are_the_organizations_own(world: World, owner: httpx.Client) -> None:
    foreign_user, foreign_group = _foreign_ids(world)
    same_answer = []
    for action, field in [
        ({"user_ids": [foreign_user]}, "actions.0.user_ids"),
        ({"user_ids": ["usr_doesnotexist"]}, "actions.0.user_ids"),
        ({"group_ids": [foreign_group]}, "actions.0.group_ids"),
    ]:
        push = {"type": "SEND_PUSH_NOTIFICATION", **action}
        body = {"name": "w", "topic": "nums", "mode": "ACTUAL", "actions": [push]}
        r = owner.post("/workflows", json=body)
        _refused(r, field)
        same_answer.append(r.json()["message"].split(":")[1].strip())
    assert same_answer[0] == same_answer[1] == "not users of this organization", same_answer
    mine = owner.post("/groups", json={"name": f"own-{uuid.uuid4().hex[:8]}"}).json()["id"]
    own_push = {"type": "SEND_PUSH_NOTIFICATION", "group_ids": [mine]}
    wf = owner.post("/workflows", json={"name": "w", "topic": "nums", "mode": "ACTUAL", "actions": [own_push]})
    assert wf.status_code == 201, wf.text
    patched = owner.patch(
        f"/workflows/{wf.json()['id']}",
        json={"actions": [{"type": "SEND_PUSH_NOTIFICATION", "group_ids": [mine, foreign_group]}]},
    )
    _refused(patched, "actions.0.group_ids")


# --- 6. tenants in shared topics --------------------------------------------------------------------------


def _hook_workflow(client: httpx.Client, topic: str, topic_org: str, name: str) -> httpx.Response:
    action = {"type": "SEND_WEBHOOK", "url": "https://example.com/hook"}
    body = {"name": name, "topic": topic, "topic_organization_id": topic_org, "mode": "ACTUAL", "actions": [action]}
    return client.post("/workflows", json=body)


def test_a_receiver_cannot_spend_the_owners_workflow_quota(world: World, owner: httpx.Client) -> None:
    org = world.stack.org
    assert owner.post("/workflow_topics", json={"key": "quota", "access_scope": "public"}).status_code == 201
    with world.other_client() as other:
        for i in range(3):
            assert _hook_workflow(other, "quota", org, f"theirs {i}").status_code == 201
        refused = _hook_workflow(other, "quota", org, "theirs 4")
        _refused(refused, "topic")
    for i in range(3):
        r = _hook_workflow(owner, "quota", org, f"mine {i}")
        assert r.status_code == 201, r.text
    _refused(_hook_workflow(owner, "quota", org, "mine 4"), "topic")


def test_deleting_a_shared_topic_detaches_receivers_workflows(world: World, owner: httpx.Client) -> None:
    org, other_org = world.stack.org, world.other["organization_id"]
    assert owner.post("/workflow_topics", json={"key": "bye", "access_scope": "public"}).status_code == 201
    with world.other_client() as other:
        theirs = _hook_workflow(other, "bye", org, "theirs")
        assert theirs.status_code == 201, theirs.text
        theirs_id = theirs.json()["id"]
        mine = _hook_workflow(owner, "bye", org, "mine").json()["id"]
        blocked = owner.delete("/workflow_topics/bye")
        assert blocked.status_code == 409, blocked.text
        assert blocked.json()["details"]["workflows"] == [mine] and theirs_id not in blocked.text
        assert owner.delete(f"/workflows/{mine}").status_code == 204
        deleted = owner.delete("/workflow_topics/bye")
        assert deleted.status_code == 204, deleted.text  # before: 409 for as long as the receiver kept it
        assert owner.get("/workflow_topics/bye").status_code == 404
        detached = other.get(f"/workflows/{theirs_id}").json()
        assert (detached["topic_id"], detached["topic_organization_id"], detached["status"]) == (None, None, "INACTIVE")
        entry = next(e for e in other.get("/audit_log").json()["items"] if e["target"]["id"] == theirs_id)
        assert entry["action"] == "detach" and entry["actor"] == {"kind": "organization", "id": org}
        assert theirs_id not in repr(owner.get("/audit_log").json()), "the owner's log names no receiver's workflow"
        _refused(other.patch(f"/workflows/{theirs_id}", json={"status": "ACTIVE"}), "topic")
        assert other.post("/workflow_topics", json={"key": "own-again"}).status_code == 201
        again = other.patch(f"/workflows/{theirs_id}", json={"topic": "own-again", "status": "ACTIVE"})
        assert again.status_code == 200, again.text
        assert again.json()["topic_organization_id"] == other_org
