"""Publish over HTTP against a real API process and broker: auth codes and every field's validation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.domain.iam.tokens import generate_token
from devstack.kafka import LocalKafka
from tests.support.db import expired_owner_token
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

GOOD = {"status": "ACTUAL", "data": {"magnitude": 5}}


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("api"), kafka.bootstrap)
    stack.bootstrap()
    stack.start_api()
    with stack.client() as client:
        assert client.post("/workflow_topics", json={"key": "quake"}).status_code == 201
        assert client.post("/workflow_topics", json={"key": "paused", "status": "INACTIVE"}).status_code == 201
    yield stack
    stack.stop()


def _publish(stack: Stack, body: Any = None, *, headers: dict[str, str] | None = None, **kw: Any) -> httpx.Response:
    url = f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/quake/publish"
    sent = {"Authorization": f"Bearer {stack.credentials['access_token']}", **(headers or {})}
    if body is not None:
        kw["json"] = body
    return httpx.post(url, headers=sent, timeout=10, **kw)


def test_valid_publish_is_accepted_with_server_event_id(api: Stack) -> None:
    r = _publish(api, GOOD)
    assert r.status_code == 202
    assert r.json()["id"].startswith("evt_")
    assert r.headers["x-request-id"]


def test_topic_key_and_id_both_work_in_the_path(api: Stack) -> None:
    with api.client() as client:
        topic = client.get("/workflow_topics/quake").json()
        assert client.post(f"/workflow_topics/{topic['id']}/publish", json=GOOD).status_code == 202


@pytest.mark.parametrize(
    ("authorization", "code"),
    [
        (None, "AUT-002"),
        ("Basic dXNlcjpwYXNz", "AUT-002"),
        ("Bearer", "AUT-002"),
        ("Bearer not-a-token", "AUT-002"),
        ("Bearer tcs_" + "A" * 38, "AUT-002"),
        ("Bearer " + generate_token(), "AUT-003"),
    ],
    # ids that do not carry the random token: make test's two processes must collect the same tests
    ids=["none", "basic", "bearer-empty", "not-a-token", "bad-checksum", "unknown-token"],
)
def test_bad_tokens_are_401_with_their_code(api: Stack, authorization: str | None, code: str) -> None:
    url = f"{api.base_url}/v1/organizations/{api.org}/workflow_topics/quake/publish"
    headers = {"Authorization": authorization} if authorization is not None else {}
    r = httpx.post(url, json=GOOD, headers=headers, timeout=10)
    assert r.status_code == 401
    assert r.json()["code"] == code


def test_expired_token_is_401_aut_004(api: Stack) -> None:
    r = _publish(api, GOOD, headers={"Authorization": f"Bearer {expired_owner_token(api)}"})
    assert r.status_code == 401
    assert r.json()["code"] == "AUT-004"


def test_another_organizations_topic_is_404(api: Stack) -> None:
    url = f"{api.base_url}/v1/organizations/org_someoneelse/workflow_topics/quake/publish"
    r = httpx.post(url, json=GOOD, headers={"Authorization": f"Bearer {api.credentials['access_token']}"})
    assert r.status_code == 404
    assert r.json()["code"] == "RES-001"


def test_unknown_topic_is_404_and_inactive_topic_is_409(api: Stack) -> None:
    with api.client() as client:
        assert client.post("/workflow_topics/nope/publish", json=GOOD).json()["code"] == "RES-001"
        paused = client.post("/workflow_topics/paused/publish", json=GOOD)
        assert paused.status_code == 409
        assert paused.json()["code"] == "RES-002"


def test_non_json_body_is_415(api: Stack) -> None:
    r = _publish(api, content=b"status=ACTUAL", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415
    assert r.json()["code"] == "VAL-003"


def test_oversized_body_is_413(api: Stack) -> None:
    big = {"status": "ACTUAL", "data": {"blob": "x" * (300 * 1024)}}
    r = _publish(api, big)
    assert r.status_code == 413
    assert r.json()["code"] == "VAL-002"


INVALID: list[tuple[str, Any, str]] = [
    ("missing data", {"status": "ACTUAL"}, "data"),
    ("missing status", {"data": {}}, "status"),
    ("unknown status", {"status": "LIVE", "data": {}}, "status"),
    ("data not an object", {"status": "ACTUAL", "data": [1]}, "data"),
    ("unknown top-level field", {**GOOD, "priority": 1}, "priority"),
    ("empty event.id", {**GOOD, "event": {"id": ""}}, "event.id"),
    ("event.name not a string", {**GOOD, "event": {"name": 5}}, "event.name"),
    ("idempotency_key too long", {**GOOD, "attributes": {"idempotency_key": "k" * 300}}, "attributes.idempotency_key"),
    (
        "target orgs not a list",
        {**GOOD, "attributes": {"target_organization_ids": "org"}},
        "attributes.target_organization_ids",
    ),
    ("metric not a number", {**GOOD, "event_control": {"metrics": {"pga": "high"}}}, "event_control.metrics.pga"),
    ("areas not strings", {**GOOD, "event_control": {"areas": [1, 2]}}, "event_control.areas.0"),
    ("empty partition_key", {**GOOD, "event_control": {"partition_key": ""}}, "event_control.partition_key"),
    # PostgreSQL refuses U+0000 in text and jsonb: accepted, such an event could never be decided
    ("NUL in data", {**GOOD, "data": {"a": "x\x00"}}, "data.a"),
    ("NUL in event.id", {**GOOD, "event": {"id": "nul\x00id"}}, "event.id"),
    ("NUL in event.name", {**GOOD, "event": {"name": "\u202ertl\x00"}}, "event.name"),
    ("NUL in partition_key", {**GOOD, "event_control": {"partition_key": "k\x00"}}, "event_control.partition_key"),
    (
        "sound volume above 1",
        {**GOOD, "notification": {"alert": {"options": {"notification": {"sound": {"volume": 1.5}}}}}},
        "notification.alert.options.notification.sound",
    ),
    (
        "negative time_to_live",
        {**GOOD, "notification": {"alert": {"options": {"time_to_live": -1}}}},
        "notification.alert.options.time_to_live",
    ),
]


@pytest.mark.parametrize(("case", "body", "field"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_publish_is_422_naming_the_field(api: Stack, case: str, body: Any, field: str) -> None:
    r = _publish(api, body)
    assert r.status_code == 422, case
    payload = r.json()
    assert payload["code"] == "VAL-001"
    fields = [f["field"] for f in payload["details"]["fields"]]
    assert any(f.startswith(field) for f in fields), fields


def test_invalid_json_is_422(api: Stack) -> None:
    r = _publish(api, content=b'{"status": ', headers={"Content-Type": "application/json"})
    assert r.status_code == 422
    assert r.json()["code"] == "VAL-001"
