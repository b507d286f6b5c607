"""Workflows are checked when saved: the filter against the topic's fields, sites against a site
field, each action (operation book, e-mail addresses, webhook URL and secret); webhook secrets
are never read back; an update keeps a masked secret and re-enables endpoints."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.domain.delivery.webhooks import new_secret
from devstack.kafka import LocalKafka
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

FIELDS = [
    {"id": "mag", "path": "quake.magnitude", "values": [{"type": "number", "operators": [">=", "BETWEEN"]}]},
    {"id": "region", "path": "region", "values": [{"type": "string", "operators": ["=", "IN"]}]},
    {"id": "site", "path": "site", "site": True, "values": [{"type": "string", "operators": ["="]}]},
]
HOOK = "https://hooks.example.com/tocsin"


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(
        tmp_path_factory.mktemp("workflows"), kafka.bootstrap, database_url=database
    )  # private networks not allowed
    stack.bootstrap()
    stack.start_api()
    with stack.client() as c:
        assert c.post("/workflow_topics", json={"key": "quakes", "fields": FIELDS}).status_code == 201
        assert c.post("/workflow_topics", json={"key": "bare"}).status_code == 201
    yield stack
    stack.stop()


@pytest.fixture
def client(api: Stack) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


def _workflow(**changes: Any) -> dict[str, Any]:
    return {
        "name": "w",
        "topic": "quakes",
        "mode": "ACTUAL",
        "actions": [{"type": "SEND_WEBHOOK", "url": HOOK, "secret": new_secret()}],
        **changes,
    }


BAD = [
    ("unknown field", {"filter": {"field": "depth", "operator": ">=", "value": 1}}, "filter.field"),
    ("operator the field does not allow", {"filter": {"field": "mag", "operator": "<", "value": 1}}, "filter.operator"),
    ("operator of another type", {"filter": {"field": "region", "operator": ">=", "value": 1}}, "filter.operator"),
    ("string for a number", {"filter": {"field": "mag", "operator": ">=", "value": "5"}}, "filter.value"),
    ("boolean for a number", {"filter": {"field": "mag", "operator": ">=", "value": True}}, "filter.value"),
    ("BETWEEN with one bound", {"filter": {"field": "mag", "operator": "BETWEEN", "value": [1]}}, "filter.value"),
    ("BETWEEN reversed", {"filter": {"field": "mag", "operator": "BETWEEN", "value": [5, 1]}}, "filter.value"),
    ("empty IN", {"filter": {"field": "region", "operator": "IN", "value": []}}, "filter.value"),
    ("empty all", {"filter": {"all": []}}, "filter.all"),
    ("two kinds in a node", {"filter": {"all": [], "any": []}}, "filter"),
    (
        "nested error path",
        {"filter": {"all": [{"field": "mag", "operator": ">=", "value": 5}, {"not": {"field": "x", "operator": "="}}]}},
        "filter.all.1.not.field",
    ),
    ("sites on a topic without a site field", {"topic": "bare", "sites": ["tokyo"]}, "sites"),
    (
        "plain http webhook",
        {"actions": [{"type": "SEND_WEBHOOK", "url": "http://hooks.example.com/x"}]},
        "actions.0.url",
    ),
    (
        "webhook URL with credentials",
        {"actions": [{"type": "SEND_WEBHOOK", "url": "https://u:p@h.example.com/"}]},
        "actions.0.url",
    ),
    ("webhook URL without host", {"actions": [{"type": "SEND_WEBHOOK", "url": "https:///x"}]}, "actions.0.url"),
    (
        "malformed secret",
        {"actions": [{"type": "SEND_WEBHOOK", "url": HOOK, "secret": "whsec_!!"}]},
        "actions.0.secret",
    ),
    ("short secret", {"actions": [{"type": "SEND_WEBHOOK", "url": HOOK, "secret": "whsec_YWJj"}]}, "actions.0.secret"),
    (
        "bad e-mail address",
        {"actions": [{"type": "SEND_EMAIL", "to": ["not-an-address"], "subject": "s", "body": "b"}]},
        "actions.0.to.0",
    ),
    ("no recipients", {"actions": [{"type": "SEND_EMAIL", "to": [], "subject": "s", "body": "b"}]}, "actions.0.to"),
    ("unknown action type", {"actions": [{"type": "SEND_FAX"}]}, "actions.0"),
    (
        "missing operation book",
        {"actions": [{"type": "RUN_OPERATION_BOOK", "operation_book_id": "opb_x"}]},
        "actions.0.operation_book_id",
    ),
    ("unknown topic", {"topic": "nope"}, "topic"),
    ("topic of another organization", {"topic_organization_id": "org_unknown"}, "topic"),
]


@pytest.mark.parametrize(("what", "changes", "field"), BAD, ids=[b[0] for b in BAD])
def test_invalid_workflows_are_refused_with_the_field(
    client: httpx.Client, what: str, changes: dict[str, Any], field: str
) -> None:
    r = client.post("/workflows", json=_workflow(**changes))
    assert r.status_code == 422, r.text
    fields = [f["field"] for f in r.json()["details"]["fields"]]
    assert any(f == field or f.startswith(field + ".") or field.startswith(f) for f in fields), (what, fields)


def test_a_valid_filter_and_sites_round_trip(client: httpx.Client) -> None:
    flt = {
        "all": [
            {"field": "mag", "operator": "BETWEEN", "value": [5, 9]},
            {"field": "region", "operator": "IN", "value": ["kanto"]},
        ]
    }
    r = client.post("/workflows", json=_workflow(filter=flt, sites=["tokyo"]))
    assert r.status_code == 201, r.text
    got = client.get(f"/workflows/{r.json()['id']}").json()
    assert got["filter"] == flt and got["sites"] == ["tokyo"]


def test_secrets_are_never_read_back_and_survive_an_update(client: httpx.Client) -> None:
    given = new_secret()
    created = client.post("/workflows", json=_workflow()).json()
    r = client.post("/workflows", json=_workflow(actions=[{"type": "SEND_WEBHOOK", "url": HOOK, "secret": given}]))
    assert r.status_code == 201
    shown = r.json()["actions"][0]["secret"]
    assert shown.endswith("****") and given not in r.text, "the caller's own secret is not echoed"
    read = client.get(f"/workflows/{r.json()['id']}").json()["actions"][0]["secret"]
    assert read == shown and given not in str(client.get("/workflows").json())
    # An update that sends the masked secret back keeps the stored one (same URL).
    patched = client.patch(
        f"/workflows/{r.json()['id']}", json={"actions": [{"type": "SEND_WEBHOOK", "url": HOOK, "secret": read}]}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["actions"][0]["secret"] == shown
    assert created["actions"][0]["secret"].endswith("****")


def test_a_generated_secret_is_shown_once(client: httpx.Client) -> None:
    r = client.post("/workflows", json=_workflow(actions=[{"type": "SEND_WEBHOOK", "url": HOOK}]))
    assert r.status_code == 201, r.text
    secret = r.json()["actions"][0]["secret"]
    assert secret.startswith("whsec_") and not secret.endswith("****")
    assert client.get(f"/workflows/{r.json()['id']}").json()["actions"][0]["secret"].endswith("****")


def test_patch_validates_like_create(client: httpx.Client) -> None:
    wf = client.post("/workflows", json=_workflow()).json()
    r = client.patch(f"/workflows/{wf['id']}", json={"filter": {"field": "mag", "operator": "<", "value": 1}})
    assert r.status_code == 422 and r.json()["details"]["fields"][0]["field"] == "filter.operator"
    assert client.patch(f"/workflows/{wf['id']}", json={"mode": "DRILL"}).json()["mode"] == "DRILL"
    assert client.patch(f"/workflows/{wf['id']}", json={"color": "red"}).status_code == 422
    assert client.patch("/workflows/wfl_missing", json={"mode": "DRILL"}).status_code == 404
