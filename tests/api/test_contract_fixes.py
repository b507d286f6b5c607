"""What the OpenAPI fuzzing (test_openapi_fuzz.py) found, one request each, against a real API:
each answered 500 (or another undocumented status) before."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from devstack.kafka import LocalKafka
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

FIELDS = [{"id": "region", "path": "region", "values": [{"type": "string", "operators": ["="]}]}]


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("contract-fixes"), kafka.bootstrap)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture
def client(api: Stack) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


def _refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "VAL-001"
    assert field in [f["field"] for f in body["details"]["fields"]], body


@pytest.mark.parametrize(
    ("create", "body", "patch"),
    [
        ("/service_accounts", {"name": "a"}, {"name": None}),
        ("/service_accounts", {"name": "b"}, {"description": None}),
        ("/users", {"email": "n@example.com", "display_name": "N"}, {"display_name": None}),
        ("/groups", {"name": "nulls"}, {"member_user_ids": None}),
        ("/workflow_topics", {"key": "nulls"}, {"access_scope": None}),
    ],
)
def test_null_for_a_field_that_cannot_be_null_is_a_422(
    client: httpx.Client, create: str, body: dict[str, object], patch: dict[str, object]
) -> None:
    created = client.post(create, json=body)
    assert created.status_code == 201, created.text
    one = f"{create}/{created.json()['id']}"
    _refused(client.patch(one, json=patch), next(iter(patch)))
    assert client.get(one).status_code == 200  # nothing half-written


def test_null_relations_of_an_organization_are_a_422(api: Stack, client: httpx.Client) -> None:
    org = f"{api.base_url}/v1/organizations/{api.org}"
    _refused(client.patch(org, json={"partner_organization_ids": None}), "partner_organization_ids")
    assert client.get(org).json()["partner_organization_ids"] == []


def test_a_group_name_taken_is_a_409_on_create_and_rename(client: httpx.Client) -> None:
    assert client.post("/groups", json={"name": "taken"}).status_code == 201
    again = client.post("/groups", json={"name": "taken"})
    assert (again.status_code, again.json()["code"]) == (409, "RES-002")
    other = client.post("/groups", json={"name": "other"}).json()
    renamed = client.patch(f"/groups/{other['id']}", json={"name": "taken"})
    assert (renamed.status_code, renamed.json()["code"]) == (409, "RES-002")
    assert client.get(f"/groups/{other['id']}").json()["name"] == "other"


def test_a_body_that_is_not_json_is_a_422(client: httpx.Client) -> None:
    response = client.post("/groups", content=b"V \x14\xff P", headers={"Content-Type": "application/json"})
    _refused(response, "")


def test_values_of_another_json_type_are_refused_not_coerced(client: httpx.Client) -> None:
    fields = [{"id": "region", "path": "region", "site": 0}]
    _refused(client.post("/workflow_topics", json={"key": "coerced", "fields": fields}), "fields.0.site")
    _refused(client.post("/service_accounts/x/access_tokens", json={"expires_in": "3600"}), "expires_in")
    topic = client.post("/workflow_topics", json={"key": "metrics"}).json()
    published = client.post(
        f"/workflow_topics/{topic['id']}/publish",
        json={"data": {}, "status": "TEST", "event_control": {"metrics": {"m": False}}},
    )
    _refused(published, "event_control.metrics.m")


def test_a_control_policy_patched_in_is_stored_whole(client: httpx.Client) -> None:
    topic = client.post("/workflow_topics", json={"key": "policy", "fields": FIELDS}).json()
    patched = client.patch(f"/workflow_topics/{topic['id']}", json={"control_policy_profile": {}})
    assert patched.status_code == 200, patched.text
    read = client.get(f"/workflow_topics/{topic['id']}")
    assert read.status_code == 200, read.text
    assert read.json()["control_policy_profile"]["type"] == "BYPASS"
    assert read.json()["control_policy_profile"]["rules"] == []
    assert read.json()["fields"][0]["values"][0]["value_source"] == "value"


def test_an_id_with_a_newline_is_not_found_not_forbidden(api: Stack, client: httpx.Client) -> None:
    response = client.get("/incidents/inc_x%0A/events")
    assert (response.status_code, response.json()["code"]) == (404, "RES-001")
