"""Input limits against a real API process: each one just under passes, just over is refused
with its status, code and failing field (413 VAL-002 for bodies, 422 VAL-001 otherwise); hostile
nesting and a huge chunked body are refused cleanly (never a 500) on the publish fast path and
on ordinary routes. The limits are lowered (TOCSIN_MAX_*) so the bodies stay small."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from devstack.kafka import LocalKafka
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

BODY_LIMIT = 256 * 1024  # the default: a 100k-deep array fits under it
LIMITS = {
    "TOCSIN_MAX_PUBLISH_DATA_BYTES": "1000",
    "TOCSIN_MAX_PUBLISH_DATA_DEPTH": "5",
    "TOCSIN_MAX_PUBLISH_STRING_CHARS": "100",
    "TOCSIN_MAX_PUBLISH_ARRAY_ITEMS": "10",
    "TOCSIN_MAX_PUBLISH_METRICS": "3",
    "TOCSIN_MAX_WORKFLOW_ACTIONS": "2",
    "TOCSIN_MAX_FILTER_CONDITIONS": "3",
    "TOCSIN_MAX_FILTER_VALUES": "4",
    "TOCSIN_MAX_BINDINGS_PER_SUBJECT": "3",
    "TOCSIN_MAX_BINDINGS_PER_ORGANIZATION": "8",
    "TOCSIN_MAX_WORKFLOWS_PER_ORGANIZATION": "3",
    "TOCSIN_MAX_WORKFLOWS_PER_TOPIC": "2",
}
FIELDS = [{"id": "region", "path": "region", "values": [{"type": "string", "operators": ["=", "IN"]}]}]
PUSH = {"type": "SEND_PUSH_NOTIFICATION"}


@pytest.fixture(scope="module")
def api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, database: str | None) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("input-limits"), kafka.bootstrap, extra_env=LIMITS, database_url=database)
    stack.bootstrap()
    stack.start_api()
    with stack.client() as c:
        for key in ("quake", "second", "third"):
            assert c.post("/workflow_topics", json={"key": key, "fields": FIELDS}).status_code == 201
    yield stack
    stack.stop()


@pytest.fixture
def client(api: Stack) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


def _url(stack: Stack, path: str) -> str:
    return f"{stack.base_url}/v1/organizations/{stack.org}{path}"


def _post(stack: Stack, path: str, content: Any, **headers: str) -> httpx.Response:
    sent = {
        "Authorization": f"Bearer {stack.credentials['access_token']}",
        "Content-Type": "application/json",
        **headers,
    }
    return httpx.post(_url(stack, path), content=content, headers=sent, timeout=30)


def _publish(stack: Stack, body: dict[str, Any]) -> httpx.Response:
    return _post(stack, "/workflow_topics/quake/publish", json.dumps(body).encode())


def _refused(r: httpx.Response, field: str) -> None:
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["code"] == "VAL-001"
    assert field in [f["field"] for f in body["details"]["fields"]], body


def _padded(body: dict[str, Any], size: int) -> bytes:
    """``body`` as JSON padded with trailing whitespace to exactly ``size`` bytes."""
    raw = json.dumps(body).encode()
    assert len(raw) <= size
    return raw + b" " * (size - len(raw))


def _chunks(total: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    """A body sent without Content-Length (chunked): ``{"data": {"x": "aaaa...`` never closed."""
    yield b'{"status": "ACTUAL", "data": {"x": "'
    sent = 0
    while sent < total:
        yield b"a" * chunk
        sent += chunk


# --- body size: 413 VAL-002 on the publish fast path and on ordinary routes ---------------


def test_publish_body_at_the_limit_passes_one_byte_over_is_413(api: Stack) -> None:
    body = {"status": "ACTUAL", "data": {}, "event": {"description": "d"}}
    assert _post(api, "/workflow_topics/quake/publish", _padded(body, BODY_LIMIT)).status_code == 202
    over = _post(api, "/workflow_topics/quake/publish", _padded(body, BODY_LIMIT + 1))
    assert over.status_code == 413, over.text
    assert over.json()["code"] == "VAL-002"


def test_ordinary_route_body_at_the_limit_passes_one_byte_over_is_413(api: Stack) -> None:
    assert _post(api, "/service_accounts", _padded({"name": "padded"}, BODY_LIMIT)).status_code == 201
    over = _post(api, "/service_accounts", _padded({"name": "padded"}, BODY_LIMIT + 1))
    assert over.status_code == 413, over.text
    assert over.json()["code"] == "VAL-002"
    assert over.headers["x-request-id"]


@pytest.mark.parametrize("path", ["/workflow_topics/quake/publish", "/service_accounts", "/workflows"])
def test_huge_chunked_body_without_content_length_is_413(api: Stack, path: str) -> None:
    r = _post(api, path, _chunks(20 * 1024 * 1024))
    assert r.request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in r.request.headers
    assert r.status_code == 413, r.text
    assert r.json()["code"] == "VAL-002"


def test_small_chunked_body_is_read_whole(api: Stack) -> None:
    def parts() -> Iterator[bytes]:
        yield b'{"status": "ACTUAL", '
        yield b'"data": {"a": 1}}'

    assert _post(api, "/workflow_topics/quake/publish", parts()).status_code == 202
    assert _post(api, "/service_accounts", iter([b'{"name": ', b'"chunked"}'])).status_code == 201


# --- hostile nesting: a 100k-deep array is a 422, never a RecursionError or a 500 ----------


@pytest.mark.parametrize("path", ["/workflow_topics/quake/publish", "/service_accounts", "/workflows"])
def test_100k_deep_nesting_is_422_not_500(api: Stack, path: str) -> None:
    deep = b'{"status": "ACTUAL", "name": "x", "data": {"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    assert len(deep) < BODY_LIMIT
    r = _post(api, path, deep)
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "VAL-001"
    with api.client() as c:  # and the replica still serves
        assert c.get("/service_accounts").status_code == 200


def _nested(levels: int) -> dict[str, Any]:
    """``data`` with ``levels`` levels of objects (``data`` itself is the first)."""
    data: dict[str, Any] = {}
    for _ in range(levels - 1):
        data = {"a": data}
    return data


def test_data_depth_at_the_limit_passes_one_deeper_is_422_with_its_path(api: Stack) -> None:
    assert _publish(api, {"status": "ACTUAL", "data": _nested(5)}).status_code == 202
    _refused(_publish(api, {"status": "ACTUAL", "data": _nested(6)}), "data.a.a.a.a.a")
    inside_arrays = {"list": [[[[1]]]]}  # data, list, and three arrays: depth 5
    assert _publish(api, {"status": "ACTUAL", "data": inside_arrays}).status_code == 202
    _refused(_publish(api, {"status": "ACTUAL", "data": {"list": [[[[[1]]]]]}}), "data.list.0.0.0.0")


# --- data size, strings, arrays, metrics --------------------------------------------------


def _data_of_size(size: int) -> dict[str, Any]:
    """An object of short strings whose compact JSON is exactly ``size`` bytes."""
    data = {f"k{i}": "v" * 80 for i in range(size // 90)}
    filler = size - len(json.dumps(data, separators=(",", ":"))) - len(',"z":""')
    assert 0 <= filler <= 100
    data["z"] = "v" * filler
    assert len(json.dumps(data, separators=(",", ":"))) == size
    return data


def test_data_bytes_at_the_limit_pass_one_over_is_422(api: Stack) -> None:
    assert _publish(api, {"status": "ACTUAL", "data": _data_of_size(1000)}).status_code == 202
    _refused(_publish(api, {"status": "ACTUAL", "data": _data_of_size(1001)}), "data")


def test_string_length_in_data_and_notification_data(api: Stack) -> None:
    assert _publish(api, {"status": "ACTUAL", "data": {"s": "x" * 100}}).status_code == 202
    _refused(_publish(api, {"status": "ACTUAL", "data": {"s": "x" * 101}}), "data.s")
    _refused(_publish(api, {"status": "ACTUAL", "data": {"l": ["ok", "x" * 101]}}), "data.l.1")
    _refused(_publish(api, {"status": "ACTUAL", "data": {"k" * 101: 1}}), "data")
    note = {"data": {"deep": {"s": "x" * 101}}}
    _refused(_publish(api, {"status": "ACTUAL", "data": {}, "notification": note}), "notification.data.deep.s")


@pytest.mark.parametrize(
    ("where", "field"),
    [
        (lambda items: {"data": {"list": items}}, "data.list"),
        (lambda items: {"data": {}, "event_control": {"partition_key": "k", "areas": items}}, "event_control.areas"),
        (
            lambda items: {"data": {}, "attributes": {"target_organization_ids": items}},
            "attributes.target_organization_ids",
        ),
    ],
    ids=["data array", "SET members", "target organizations"],
)
def test_array_items_at_the_limit_pass_one_more_is_422(api: Stack, where: Any, field: str) -> None:
    ok = {"status": "ACTUAL", **where([f"i{n}" for n in range(10)])}
    assert _publish(api, ok).status_code == 202
    _refused(_publish(api, {"status": "ACTUAL", **where([f"i{n}" for n in range(11)])}), field)


def test_metrics_count_at_the_limit_passes_one_more_is_422(api: Stack) -> None:
    def body(n: int) -> dict[str, Any]:
        return {"status": "ACTUAL", "data": {}, "event_control": {"metrics": {f"m{i}": i for i in range(n)}}}

    assert _publish(api, body(3)).status_code == 202
    _refused(_publish(api, body(4)), "event_control.metrics")


# --- workflows: actions, filter arrays, counts per organization and per topic --------------


def _workflow(topic: str = "quake", **changes: Any) -> dict[str, Any]:
    return {"name": "w", "topic": topic, "mode": "ACTUAL", "actions": [PUSH], **changes}


def _created_then_deleted(client: httpx.Client, body: dict[str, Any]) -> None:
    r = client.post("/workflows", json=body)
    assert r.status_code == 201, r.text
    assert client.delete(f"/workflows/{r.json()['id']}").status_code == 204


def test_workflow_actions_at_the_limit_pass_one_more_is_422(client: httpx.Client) -> None:
    _created_then_deleted(client, _workflow(actions=[PUSH] * 2))
    _refused(client.post("/workflows", json=_workflow(actions=[PUSH] * 3)), "actions")


def test_filter_conditions_and_values_at_the_limit_pass_one_more_is_422(client: httpx.Client) -> None:
    cond = {"field": "region", "operator": "=", "value": "kanto"}
    _created_then_deleted(client, _workflow(filter={"all": [cond] * 3}))
    _refused(client.post("/workflows", json=_workflow(filter={"all": [cond] * 4})), "filter.all")
    values = {"field": "region", "operator": "IN", "value": ["a", "b", "c", "d"]}
    _created_then_deleted(client, _workflow(filter=values))
    _refused(client.post("/workflows", json=_workflow(filter={**values, "value": list("abcde")})), "filter.value")


def test_workflows_per_topic_and_per_organization(client: httpx.Client) -> None:
    created = [client.post("/workflows", json=_workflow("quake")) for _ in range(2)]
    assert [r.status_code for r in created] == [201, 201]
    on_full_topic = client.post("/workflows", json=_workflow("quake"))
    _refused(on_full_topic, "topic")
    assert "workflows on this topic, the most allowed" in on_full_topic.json()["message"]
    third = client.post("/workflows", json=_workflow("second"))
    assert third.status_code == 201, third.text
    # moving a workflow onto a full topic is refused like creating one there
    _refused(client.patch(f"/workflows/{third.json()['id']}", json={"topic": "quake"}), "topic")
    over_org = client.post("/workflows", json=_workflow("third"))
    _refused(over_org, "")
    assert "the organization has 3 workflows" in over_org.json()["message"]
    assert client.delete(f"/workflows/{created[0].json()['id']}").status_code == 204
    assert client.post("/workflows", json=_workflow("third")).status_code == 201, "room again after a delete"


# --- IAM bindings: per subject and per organization --------------------------------------


def _bindings(org: str, n: int, tag: str) -> dict[str, Any]:
    return {
        "bindings": [
            {"resource": f"crn:tocsin:organizations:{org}:workflow_topics/{tag}{i}", "role_id": "viewer"}
            for i in range(n)
        ]
    }


def test_bindings_per_subject_and_per_organization(api: Stack, client: httpx.Client) -> None:
    org = api.org
    # the bootstrap's owner service account and owner person, and whatever else holds bindings already
    holders = [f"/service_accounts/{a['id']}" for a in client.get("/service_accounts").json()["items"]]
    holders += [f"/users/{u['id']}" for u in client.get("/users").json()["items"]]
    owner = [b for holder in holders for b in client.get(f"{holder}/iam").json()["bindings"]]
    accounts = [client.post("/service_accounts", json={"name": f"b{i}"}).json()["id"] for i in range(4)]
    first = client.put(f"/service_accounts/{accounts[0]}/iam", json=_bindings(org, 3, "a"))
    assert first.status_code == 200, first.text
    _refused(client.put(f"/service_accounts/{accounts[1]}/iam", json=_bindings(org, 4, "b")), "bindings")
    # fill the organization up to exactly 8 bindings, in subjects of at most 3
    left = 8 - len(owner) - 3
    assert 0 < left <= 6
    for i, account in enumerate(accounts[1:3]):
        n = min(3, left - 3 * i)
        if n > 0:
            r = client.put(f"/service_accounts/{account}/iam", json=_bindings(org, n, f"c{i}"))
            assert r.status_code == 200, r.text
    over = client.put(f"/service_accounts/{accounts[3]}/iam", json=_bindings(org, 1, "d"))
    _refused(over, "bindings")
    assert "more than the 8 allowed" in over.json()["message"]
    # replacing a subject's own bindings does not count them twice
    assert client.put(f"/service_accounts/{accounts[0]}/iam", json=_bindings(org, 3, "e")).status_code == 200
    assert client.put(f"/service_accounts/{accounts[0]}/iam", json={"bindings": []}).status_code == 200
    assert client.put(f"/service_accounts/{accounts[3]}/iam", json=_bindings(org, 1, "d")).status_code == 200
