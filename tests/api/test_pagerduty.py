"""PagerDuty Events API v2 (``POST /v2/enqueue``) and a topic's integration keys against a real API
process and broker: keys shown once and stored hashed; each event one publish request keyed by its
dedup key; every refusal (bad event, oversized body, malformed, unknown, revoked or another
organization's key) answered in Events v2's terms with nothing stored."""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from app.domain.iam.tokens import INTEGRATION_KEY_PREFIX, generate_token
from tests.api.test_publish_batch import stored
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

KEYS = "/workflow_topics/{topic}/integration_keys"
KEY_PERMISSION = "organization.workflow_topic.integration_key"


@pytest.fixture(scope="module")
def api(ingress_api: Stack) -> Stack:
    """The shared ingress API (tests/api/conftest.py) with this module's topics."""
    stack = ingress_api
    with stack.client() as client:
        for key in ("pd", "pd-metric"):
            body: dict[str, Any] = {"key": key}
            if key == "pd-metric":
                body["control_policy_profile"] = {"type": "METRIC", "rules": [{"metric_name": "x", "threshold": 1}]}
            assert client.post("/workflow_topics", json=body).status_code == 201
    return stack


def new_key(stack: Stack, topic: str = "pd", token: str | None = None) -> dict[str, Any]:
    with stack.client(token) as client:
        r = client.post(KEYS.format(topic=topic), json={"name": "monitoring"})
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def enqueue(stack: Stack, body: Any, **kw: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    return httpx.post(f"{stack.base_url}/v2/enqueue", content=content, timeout=30, **kw)


def trigger(routing_key: str, dedup_key: str | None = None, **payload: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": "trigger",
        "payload": {"summary": "disk full on db1", "source": "db1", "severity": "critical", **payload},
    }
    if dedup_key is not None:
        event["dedup_key"] = dedup_key
    return event


def with_dedup_key(stack: Stack, dedup_key: str) -> list[dict[str, Any]]:
    return [v for v in stored(stack) if v.get("data", {}).get("dedup_key") == dedup_key]


def invalid(r: httpx.Response) -> list[str]:
    assert r.status_code == 400, r.text
    body = r.json()
    assert (body["status"], body["message"]) == ("invalid event", "Event object is invalid")
    errors: list[str] = body["errors"]
    return errors


def test_a_key_is_shown_once_stored_hashed_and_listed_without_it(api: Stack) -> None:
    created = new_key(api)
    assert created["routing_key"].startswith(INTEGRATION_KEY_PREFIX)
    assert set(created) == {"id", "name", "topic_id", "created_at", "routing_key"}
    with api.client() as client:
        listed = client.get(KEYS.format(topic="pd")).json()["items"]
    assert {k["id"] for k in listed} >= {created["id"]}
    assert all("routing_key" not in k for k in listed)
    with sqlite3.connect(api.var_dir / "tocsin.db") as db:
        (hashed,) = db.execute("SELECT key_hash FROM integration_keys WHERE id = ?", (created["id"],)).fetchone()
    assert hashed == hashlib.sha256(created["routing_key"].encode()).hexdigest()


def test_each_event_is_a_publish_keyed_by_its_dedup_key(api: Stack) -> None:
    routing_key = new_key(api)["routing_key"]
    dedup = uuid.uuid4().hex
    r = enqueue(api, trigger(routing_key, dedup, custom_details={"free": "3%"}, component="disk"))
    assert r.status_code == 202, r.text
    answer = r.json()
    assert {k: answer[k] for k in ("status", "message", "dedup_key")} == {
        "status": "success",
        "message": "Event processed",
        "dedup_key": dedup,
    }
    resolve = enqueue(api, {"routing_key": routing_key, "event_action": "resolve", "dedup_key": dedup})
    assert resolve.status_code == 202, resolve.text
    first, second = with_dedup_key(api, dedup)
    assert first["id"] == answer["event_id"]
    assert first["event"] == {"id": dedup, "name": "disk full on db1"}
    assert first["event_control"] == {"partition_key": dedup}
    assert first["data"]["custom_details"] == {"free": "3%"} and first["data"]["severity"] == "critical"
    assert second["event_control"] == {"partition_key": dedup, "action": "resolve"}
    # a trigger without a dedup key is given one, as Events v2 does: the server's event id
    given = enqueue(api, trigger(routing_key))
    assert given.status_code == 202 and given.json()["dedup_key"] == given.json()["event_id"]
    # METRIC topics need a partition key: the dedup key is one
    metric_key = new_key(api, "pd-metric")["routing_key"]
    assert enqueue(api, trigger(metric_key, "m-1")).status_code == 202


BAD_EVENTS = [
    ("not JSON", b"{nope", "the body is not valid JSON"),
    ("not an object", b"[]", "the body must be a JSON object"),
    ("no action", {"event_action": None}, "'event_action' is missing or invalid"),
    ("unknown action", {"event_action": "escalate"}, "'event_action' is missing or invalid"),
    ("no summary", {"payload": {"source": "db1", "severity": "critical"}}, "'payload.summary' is missing"),
    ("bad severity", {"payload": {"summary": "s", "source": "db1", "severity": "page"}}, "'payload.severity'"),
    ("no payload", {"payload": None}, "'payload' is missing"),
    ("blank dedup key", {"dedup_key": " "}, "'dedup_key' must be"),
    ("long dedup key", {"dedup_key": "k" * 256}, "'dedup_key' must be"),
    ("resolve without key", {"event_action": "resolve", "payload": None, "dedup_key": None}, "required to resolve"),
    ("deep details", {"payload": {"summary": "s", "source": "x", "severity": "info", "custom_details": {}}}, None),
]


@pytest.mark.parametrize(("name", "change", "said"), BAD_EVENTS, ids=[b[0] for b in BAD_EVENTS])
def test_a_bad_event_is_refused_in_events_v2_terms_and_nothing_is_stored(
    api: Stack, name: str, change: Any, said: str | None
) -> None:
    routing_key = new_key(api)["routing_key"] if name == "deep details" else "tpk_x"
    mark = uuid.uuid4().hex
    if isinstance(change, bytes):
        body: Any = change
    else:
        body = {**trigger(routing_key, mark), **change}
        if name == "deep details":  # nested deeper than a publish's data may be: the publish's own check
            deep: Any = "bottom"
            for _ in range(40):
                deep = {"d": deep}
            body["payload"]["custom_details"] = deep
        body = {k: v for k, v in body.items() if v is not None}
    errors = invalid(enqueue(api, body))
    if said is not None:
        assert any(said in e for e in errors), errors
    else:
        assert any(e.startswith("'payload.custom_details") for e in errors), errors
    assert with_dedup_key(api, mark) == []


def test_an_oversized_body_is_refused_in_events_v2_terms(api: Stack) -> None:
    routing_key = new_key(api)["routing_key"]
    mark = uuid.uuid4().hex
    big = trigger(routing_key, mark, custom_details={"blob": "x" * 2_000_000})
    errors = invalid(enqueue(api, big))
    assert "larger than" in errors[0]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield orjson.dumps(big)

    errors = invalid(httpx.post(f"{api.base_url}/v2/enqueue", content=chunks(), timeout=30))
    assert "larger than" in errors[0]
    assert with_dedup_key(api, mark) == []


def test_bad_revoked_and_other_organizations_keys_are_invalid_routing_keys(api: Stack) -> None:
    created = new_key(api)
    other = api.new_organization("Other org")
    with httpx.Client(
        base_url=f"{api.base_url}/v1/organizations/{other['organization_id']}",
        headers={"Authorization": f"Bearer {other['access_token']}"},
    ) as client:
        assert client.post("/workflow_topics", json={"key": "pd"}).status_code == 201
        theirs = client.post(KEYS.format(topic="pd"), json={}).json()
        # their token sees nothing of this organization's keys, nor revokes them
        mine = f"/v1/organizations/{api.org}" + KEYS.format(topic="pd")
        assert client.get(api.base_url + mine).status_code == 404
        assert client.delete(f"{api.base_url}{mine}/{created['id']}").status_code == 404
    with api.client() as client:
        assert client.delete(KEYS.format(topic="pd") + f"/{theirs['id']}").status_code == 404
        assert client.delete(KEYS.format(topic="pd") + f"/{created['id']}").status_code == 204
        assert client.delete(KEYS.format(topic="pd") + f"/{created['id']}").status_code == 404
        assert created["id"] not in {k["id"] for k in client.get(KEYS.format(topic="pd")).json()["items"]}
    mark = uuid.uuid4().hex
    for routing_key in (
        created["routing_key"],  # revoked
        generate_token(INTEGRATION_KEY_PREFIX),  # unknown
        created["routing_key"][:-1] + ("x" if created["routing_key"][-1] != "x" else "y"),  # bad checksum
        api.credentials["access_token"],  # an access token is no routing key
        "R0UTINGKEY0000000000000000000000",  # a PagerDuty-looking one
    ):
        assert invalid(enqueue(api, trigger(routing_key, mark))) == ["Invalid routing key"]
    # another organization's key publishes to its own topic only: the event is theirs, not this org's
    r = enqueue(api, trigger(theirs["routing_key"], mark))
    assert r.status_code == 202, r.text
    [record] = with_dedup_key(api, mark)
    assert record["organization_id"] == other["organization_id"]


def test_creating_a_key_needs_the_topics_publish_permission_too(api: Stack) -> None:
    with api.client() as client:
        role = client.post(
            "/iam/roles",
            json={
                "name": "keys only",
                "policies": [{"permission_id": f"{KEY_PERMISSION}:create", "effect": "allow"}],
            },
        ).json()["id"]
        sa = client.post("/service_accounts", json={"name": "key maker"}).json()["id"]
        name = f"crn:tocsin:organizations:{api.org}"
        assert client.put(f"/service_accounts/{sa}/iam", json={"bindings": [{"resource": name, "role_id": role}]})
        token = client.post(f"/service_accounts/{sa}/access_tokens", json={}).json()["access_token"]
    with api.client(token) as client:
        r = client.post(KEYS.format(topic="pd"), json={})
    assert (r.status_code, r.json()["code"]) == (403, "IAM-002"), r.text


def test_a_deleted_topics_keys_are_gone(api: Stack) -> None:
    with api.client() as client:
        assert client.post("/workflow_topics", json={"key": "pd-gone"}).status_code == 201
    routing_key = new_key(api, "pd-gone")["routing_key"]
    with api.client() as client:
        assert client.delete("/workflow_topics/pd-gone").status_code == 204
        assert client.post("/workflow_topics", json={"key": "pd-gone"}).status_code == 201
    assert invalid(enqueue(api, trigger(routing_key, "gone"))) == ["Invalid routing key"]


def test_a_key_is_made_without_a_body_and_revoked_with_a_bare_204(api: Stack) -> None:
    """docs/api.md gives ``{name?}``: no body at all was 422 "Field required"; the revoke's 204
    carried ``content-type: application/json`` (outside attacker). Every 204 carries none."""
    with api.client() as client:
        made = client.post(KEYS.format(topic="pd"))
        assert made.status_code == 201 and made.json()["name"] == "", made.text
        gone = client.delete(KEYS.format(topic="pd") + f"/{made.json()['id']}")
        assert gone.status_code == 204 and gone.content == b""
        assert "content-type" not in gone.headers, dict(gone.headers)
        # another route's DELETE likewise
        sa = client.post("/service_accounts", json={"name": "bare 204"}).json()["id"]
        gone = client.delete(f"/service_accounts/{sa}")
        assert gone.status_code == 204 and "content-type" not in gone.headers, dict(gone.headers)


def test_details_nested_deeper_than_json_is_read_are_said_so(api: Stack) -> None:
    routing_key = new_key(api)["routing_key"]
    deep = b"[" * 2000 + b"]" * 2000
    body = orjson.dumps(trigger(routing_key)).replace(b'"severity"', b'"custom_details":' + deep + b',"severity"', 1)
    assert invalid(enqueue(api, body)) == ["the body is nested too deep (more than 1024 levels)"]
