"""A topic change never silently disables a workflow (issue 14, defect 10): a PATCH of ``fields``
that removes or retypes a field a workflow filters on, takes away an operator it uses, or drops
the site field its sites need, is refused with ``409`` naming the caller's own workflows; the
workflows of other organizations receiving the shared topic are counted, never named."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from devstack.kafka import LocalKafka
from tests.support.stack import ROOT, Stack

pytestmark = pytest.mark.kafka

LEVEL = {"id": "level", "path": "level", "values": [{"type": "number", "operators": [">=", "<"]}]}
REGION = {"id": "region", "path": "region", "values": [{"type": "string"}]}
SITE = {"id": "site", "path": "site", "site": True, "values": [{"type": "string"}]}
NOTE = {"id": "note", "path": "note", "values": [{"type": "string"}]}
HOOK = [{"type": "SEND_WEBHOOK", "url": "https://hooks.example.com/x"}]


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("topic-changes"), kafka.bootstrap, database_url=database)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture
def client(api: Stack) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


def _topic(client: httpx.Client, key: str, fields: list[dict[str, Any]], **spec: Any) -> None:
    r = client.post("/workflow_topics", json={"key": key, "fields": fields, **spec})
    assert r.status_code == 201, r.text


def _workflow(client: httpx.Client, topic: str, **changes: Any) -> str:
    r = client.post("/workflows", json={"name": "w", "topic": topic, "mode": "ACTUAL", "actions": HOOK, **changes})
    assert r.status_code == 201, r.text
    workflow_id: str = r.json()["id"]
    return workflow_id


def _fields(client: httpx.Client, topic: str) -> list[dict[str, Any]]:
    fields: list[dict[str, Any]] = client.get(f"/workflow_topics/{topic}").json()["fields"]
    return fields


ON_LEVEL = {"field": "level", "operator": ">=", "value": 10}


@pytest.mark.parametrize(
    ("case", "new_fields", "problem_at"),
    [
        ("field removed", [REGION, SITE], "filter.field"),
        ("field retyped", [{**LEVEL, "values": [{"type": "string"}]}, REGION, SITE], "filter.operator"),
        (
            "operator no longer allowed",
            [{**LEVEL, "values": [{"type": "number", "operators": ["<"]}]}, REGION, SITE],
            "filter",
        ),
    ],
)
def test_a_fields_change_that_breaks_a_filter_is_refused_naming_the_workflow(
    client: httpx.Client, case: str, new_fields: list[dict[str, Any]], problem_at: str
) -> None:
    key = "t-" + case.replace(" ", "-")
    _topic(client, key, [LEVEL, REGION, SITE])
    filtered = _workflow(client, key, filter=ON_LEVEL)
    _workflow(client, key, filter={"field": "region", "operator": "=", "value": "north"})  # unaffected here

    r = client.patch(f"/workflow_topics/{key}", json={"fields": new_fields})
    assert r.status_code == 409, r.text
    body = r.json()
    assert body["code"] == "RES-002" and filtered in body["message"]
    [named] = body["details"]["workflows"]
    assert named["id"] == filtered and named["problems"][0]["field"].startswith(problem_at), named
    assert body["details"]["other_organizations_workflows"] == 0
    kept = [(f["id"], [v["type"] for v in f["values"]], f["site"]) for f in _fields(client, key)]
    assert kept == [("level", ["number"], False), ("region", ["string"], False), ("site", ["string"], True)], (
        "a refused change changes nothing"
    )


def test_removing_the_site_field_workflows_use_is_refused(client: httpx.Client) -> None:
    _topic(client, "sited", [LEVEL, SITE])
    sited = _workflow(client, "sited", sites=["tokyo"])
    r = client.patch("/workflow_topics/sited", json={"fields": [LEVEL, {**SITE, "site": False}]})
    assert r.status_code == 409, r.text
    assert r.json()["details"]["workflows"] == [
        {
            "id": sited,
            "problems": [{"field": "sites", "message": 'the topic declares no site field (a field with "site": true)'}],
        }
    ]


def test_a_fields_change_that_keeps_every_workflow_working_is_accepted(client: httpx.Client) -> None:
    _topic(client, "growing", [LEVEL, REGION])
    workflow = _workflow(client, "growing", filter=ON_LEVEL)
    r = client.patch("/workflow_topics/growing", json={"fields": [{**LEVEL, "name_en": "Level"}, NOTE]})
    assert r.status_code == 200, r.text  # region went, but no workflow used it
    assert client.delete(f"/workflows/{workflow}").status_code == 204
    r = client.patch("/workflow_topics/growing", json={"fields": [NOTE]})
    assert r.status_code == 200, r.text  # nobody filters on level any more


def _other_org(api: Stack, name: str) -> tuple[str, httpx.Client]:
    out = subprocess.run(
        [sys.executable, "-m", "cli", "bootstrap", "--org", name],
        cwd=ROOT,
        env=api.env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    creds = json.loads(out.stdout.decode().strip().splitlines()[-1])
    client = httpx.Client(
        base_url=f"{api.base_url}/v1/organizations/{creds['organization_id']}",
        headers={"Authorization": f"Bearer {creds['access_token']}"},
        timeout=30,
    )
    return str(creds["organization_id"]), client


def test_receivers_workflows_never_block_the_owner_and_are_deactivated_with_the_reason(
    api: Stack, client: httpx.Client
) -> None:
    """Issue 16, item 6: each organization is limited by its own workflows only. A change of fields
    that breaks a receiving organization's workflow goes through; that workflow is set INACTIVE (never
    quietly stops matching), with the reason in its own organization's audit log; the owner's 409
    names only its own workflows and counts the others."""
    _topic(client, "shared", [LEVEL, REGION], access_scope="public")
    own = _workflow(client, "shared", filter=ON_LEVEL)
    _other_id, other = _other_org(api, "Receiver")
    with other:
        theirs = _workflow(
            other, "shared", topic_organization_id=api.org, filter={"field": "region", "operator": "=", "value": "x"}
        )
        also_on_level = _workflow(other, "shared", topic_organization_id=api.org, filter=ON_LEVEL)

        r = client.patch("/workflow_topics/shared", json={"fields": [LEVEL]})  # region goes: only theirs uses it
        assert r.status_code == 200, r.text
        assert theirs not in r.text and also_on_level not in r.text
        assert other.get(f"/workflows/{theirs}").json()["status"] == "INACTIVE"
        assert other.get(f"/workflows/{also_on_level}").json()["status"] == "ACTIVE"
        entry = next(e for e in other.get("/audit_log").json()["items"] if e["target"]["id"] == theirs)
        assert entry["action"] == "deactivate" and "fields" in entry["detail"]["reason"]
        assert theirs not in repr(client.get("/audit_log").json()), "the owner's log names no receiver's workflow"

        r = client.patch("/workflow_topics/shared", json={"fields": []})  # the owner's own workflow breaks
        assert r.status_code == 409, r.text
        details = r.json()["details"]
        assert [w["id"] for w in details["workflows"]] == [own] and details["other_organizations_workflows"] == 1
        assert theirs not in r.text and also_on_level not in r.text
        assert other.get(f"/workflows/{also_on_level}").json()["status"] == "ACTIVE", "a refused change changes nothing"

        # Deleting the topic names the same way: the caller's own workflows, the others counted.
        r = client.delete("/workflow_topics/shared")
        assert r.status_code == 409, r.text
        assert r.json()["details"] == {"workflow_id": own, "workflows": [own], "other_organizations_workflows": 2}
        assert theirs not in r.text and also_on_level not in r.text


def test_a_policy_type_change_is_kept_for_the_worker_and_never_shown(client: httpx.Client) -> None:
    """Issue 14, defect 9: the time of the last type change lives in the topic for the worker
    (it ends episodes older than it); the topic's reads do not show it."""
    metric = {"type": "METRIC", "rules": [{"metric_name": "level", "threshold": 10}]}
    _topic(client, "typed", [], control_policy_profile=metric, access_scope="public")
    for profile in ({"type": "SET"}, None, metric):
        r = client.patch("/workflow_topics/typed", json={"control_policy_profile": profile})
        assert r.status_code == 200, r.text
        assert "policy_type_changed_ms" not in r.text
    for path in ("/workflow_topics/typed", "/workflow_topics", "/shared_workflow_topics"):
        r = client.get(path)
        assert r.status_code == 200 and "policy_type_changed_ms" not in r.text, r.text
