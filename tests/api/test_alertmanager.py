"""The Alertmanager webhook receiver (``…/integrations/alertmanager/{topic}``) against a real API
process and broker: each alert is one publish request keyed by its fingerprint, a refused
notification stores nothing and names the webhook's field."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.api.test_publish_batch import stored
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def api(ingress_api: Stack) -> Stack:
    """The shared ingress API (tests/api/conftest.py) with this module's topics."""
    stack = ingress_api
    with stack.client() as client:
        assert client.post("/workflow_topics", json={"key": "alerts"}).status_code == 201
    return stack


def alert(fingerprint: str, status: str = "firing", **labels: str) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": "DiskFull", "severity": "page", **labels},
        "annotations": {"summary": "disk full on db1", "description": "97% used"},
        "startsAt": "2026-11-28T10:00:00Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus/graph",
        "fingerprint": fingerprint,
    }


def notification(*alerts: dict[str, Any], status: str = "firing") -> dict[str, Any]:
    return {
        "version": "4",
        "groupKey": '{}:{alertname="DiskFull"}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "tocsin",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": list(alerts),
    }


def post(stack: Stack, body: Any, *, token: str | None = None, topic: str = "alerts") -> httpx.Response:
    url = f"{stack.base_url}/v1/organizations/{stack.org}/integrations/alertmanager/{topic}"
    headers = {"Authorization": f"Bearer {token or stack.credentials['access_token']}"}
    return httpx.post(url, json=body, headers=headers, timeout=30)


def by_fingerprint(stack: Stack, fingerprint: str) -> list[dict[str, Any]]:
    return [v for v in stored(stack) if v.get("data", {}).get("fingerprint") == fingerprint]


def test_each_alert_is_a_publish_keyed_by_its_fingerprint(api: Stack) -> None:
    firing, resolved = uuid.uuid4().hex, uuid.uuid4().hex
    r = post(api, notification(alert(firing), alert(resolved, "resolved")))
    assert r.status_code == 202, r.text
    assert len(r.json()["ids"]) == 2
    [trigger] = by_fingerprint(api, firing)
    assert trigger["status"] == "ACTUAL"
    assert trigger["event_control"] == {"partition_key": firing}
    assert trigger["event"] == {"name": "disk full on db1", "description": "97% used"}
    assert trigger["data"]["labels"] == {"alertname": "DiskFull", "severity": "page"}
    assert trigger["data"]["annotations"]["summary"] == "disk full on db1"
    assert trigger["attributes"]["idempotency_key"] == f"am/{firing}/firing/2026-11-28T10:00:00Z"
    [resolve] = by_fingerprint(api, resolved)
    assert resolve["event_control"] == {"partition_key": resolved, "action": "resolve"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"version": "3"}, "version"),
        ({"alerts": []}, "alerts"),
        ({"alerts": [{**alert("x"), "fingerprint": ""}]}, "alerts.0.fingerprint"),
        ({"alerts": [alert("ok"), {**alert("y"), "status": "pending"}]}, "alerts.1.status"),
        ({"alerts": [{**alert("z"), "labels": {"n": 1}}]}, "alerts.0.labels"),
    ],
)
def test_a_refused_notification_names_the_webhook_field_and_stores_nothing(
    api: Stack, change: dict[str, Any], field: str
) -> None:
    mark = uuid.uuid4().hex
    body = {**notification(alert(mark)), **change}
    r = post(api, body)
    assert r.status_code == 422, r.text
    assert r.json()["details"]["fields"][0]["field"] == field
    assert by_fingerprint(api, mark) == [] and by_fingerprint(api, "ok") == []


def test_the_token_needs_the_publish_permission_and_the_organization(api: Stack) -> None:
    other = api.new_organization("Other org")
    assert post(api, notification(alert("a")), token=other["access_token"]).status_code == 404
    assert post(api, notification(alert("a")), token="tcs_nope").status_code == 401
    assert post(api, notification(alert("a")), topic="missing").status_code == 404


def test_an_over_long_fingerprint_is_refused_once(api: Stack) -> None:
    """The fingerprint is both the partition key and part of the idempotency key: an over-long one
    said the same fault twice in ``message`` (outside attacker)."""
    r = post(api, notification(alert("f" * 5000)))
    assert r.status_code == 422, r.text
    fields = r.json()["details"]["fields"]
    assert [f["field"] for f in fields] == ["alerts.0.fingerprint"], fields
    assert r.json()["message"].count("alerts.0.fingerprint") == 1, r.json()["message"]


def test_null_labels_are_refused(api: Stack) -> None:
    r = post(api, notification({**alert(uuid.uuid4().hex), "labels": None}))
    assert r.status_code == 422 and r.json()["details"]["fields"][0]["field"] == "alerts.0.labels", r.text
