"""CloudEvents 1.0 over HTTP on the publish paths, sent with the CloudEvents SDK (binary and
structured mode) and by hand (batch mode: the SDK has none), against a real API process and broker.

What the broker holds is read back (committed records, as the worker reads them): an accepted
event is the publish request its attributes map to (docs/api.md, CloudEvents); a refused one is a
``422 VAL-001`` naming the attribute at fault, and nothing is stored.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import orjson
import pytest
from cloudevents.core.bindings import http as ce_http
from cloudevents.core.v1.event import CloudEvent

from tests.api.test_publish_batch import stored
from tests.support.stack import Stack

pytestmark = pytest.mark.kafka

METRIC = {"type": "METRIC", "rules": [{"metric_name": "level", "mode": "ABSOLUTE", "threshold": 10}]}
BATCH = "application/cloudevents-batch+json"


@pytest.fixture(scope="module")
def api(ingress_api: Stack) -> Stack:
    """The shared ingress API (tests/api/conftest.py) with this module's topics."""
    stack = ingress_api
    return stack


def new_topic(stack: Stack, profile: dict[str, Any] | None = None) -> str:
    key = f"t{uuid.uuid4().hex[:8]}"
    body: dict[str, Any] = {"key": key, **({"control_policy_profile": profile} if profile else {})}
    with stack.client() as client:
        r = client.post("/workflow_topics", json=body)
    assert r.status_code == 201, r.text
    return key


def event(mark: str, data: Any = None, **attributes: Any) -> CloudEvent:
    return CloudEvent(
        attributes={"type": "com.example.quake", "source": "/seismo/jma", "id": f"id-{mark}", **attributes},
        data={"mark": mark} if data is None else data,
    )


def send(stack: Stack, topic: str, message: ce_http.HTTPMessage, *, path: str = "publish") -> httpx.Response:
    url = f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/{topic}/{path}"
    headers = {"Authorization": f"Bearer {stack.credentials['access_token']}", **message.headers}
    return httpx.post(url, content=message.body, headers=headers, timeout=30)


def post(stack: Stack, topic: str, body: bytes, content_type: str, *, path: str = "publish") -> httpx.Response:
    return send(stack, topic, ce_http.HTTPMessage(headers={"Content-Type": content_type}, body=body), path=path)


def by_mark(stack: Stack, mark: str) -> list[dict[str, Any]]:
    return [v for v in stored(stack) if isinstance(v.get("data"), dict) and v["data"].get("mark") == mark]


def test_binary_mode_event_is_the_publish_request_its_attributes_map_to(api: Stack) -> None:
    topic = new_topic(api, METRIC)
    mark = uuid.uuid4().hex
    sent = event(
        mark,
        subject="off Miyagi",
        partitionkey="miyagi",
        tocsinstatus="DRILL",
        tocsinmetrics='{"level": 12.5}',
        tocsinareas='["kanto", "tohoku"]',
    )
    message = ce_http.to_binary_event(sent)
    assert "ce-id" in message.headers and "content-type" not in message.headers  # the SDK's binary mode
    r = send(api, topic, message)
    assert r.status_code == 202, r.text
    [record] = by_mark(api, mark)
    assert record["id"] == r.json()["id"]
    assert record["status"] == "DRILL"
    assert record["event"] == {"name": "com.example.quake", "description": "off Miyagi"}
    assert record["event_control"] == {
        "partition_key": "miyagi",
        "metrics": {"level": 12.5},
        "areas": ["kanto", "tohoku"],
    }
    assert record["attributes"] == {"idempotency_key": f"ce/11//seismo/jma/id-{mark}"}


def test_structured_mode_event_is_accepted_as_the_same_request(api: Stack) -> None:
    topic = new_topic(api)
    mark = uuid.uuid4().hex
    message = ce_http.to_structured_event(event(mark, data={"mark": mark, "depth": {"km": 10}}))
    assert message.headers["content-type"].startswith("application/cloudevents+json")
    r = send(api, topic, message)
    assert r.status_code == 202, r.text
    [record] = by_mark(api, mark)
    assert record["status"] == "ACTUAL"  # tocsinstatus absent
    assert record["data"] == {"mark": mark, "depth": {"km": 10}}
    assert record["event"] == {"name": "com.example.quake"}
    assert "event_control" not in record


def test_batch_mode_events_are_one_batch_publish(api: Stack) -> None:
    topic = new_topic(api)
    marks = [uuid.uuid4().hex for _ in range(3)]
    events = [orjson.loads(ce_http.to_structured_event(event(m)).body) for m in marks]
    r = post(api, topic, orjson.dumps(events), BATCH, path="publish:batch")
    assert r.status_code == 202, r.text
    assert len(r.json()["ids"]) == 3
    assert [by_mark(api, m)[0]["id"] for m in marks] == r.json()["ids"]


@pytest.mark.parametrize(
    ("attributes", "data", "attribute"),
    [
        ({"tocsinstatus": "LIVE"}, None, "tocsinstatus"),
        ({"tocsinmetrics": '{"level": "high"}'}, None, "tocsinmetrics.level"),
        ({"tocsinmetrics": "level=3"}, None, "tocsinmetrics"),
        ({"tocsinareas": '"kanto"'}, None, "tocsinareas"),
        ({"type": "x" * 2000}, None, "type"),
        ({"id": "i" * 300}, None, "id"),
        ({"subject": "a\x00b"}, None, "subject"),  # percent-encoded as %00: PostgreSQL refuses NUL
        ({}, ["not", "an", "object"], "data"),
    ],
)
def test_refused_binary_event_names_the_attribute_at_fault(
    api: Stack, attributes: dict[str, Any], data: Any, attribute: str
) -> None:
    topic = new_topic(api)
    mark = uuid.uuid4().hex
    sent = event(mark, **attributes)
    message = ce_http.to_binary_event(sent)
    body = message.body if data is None else orjson.dumps(data)
    r = send(api, topic, ce_http.HTTPMessage(headers=message.headers, body=body))
    assert r.status_code == 422, r.text
    answer = r.json()
    assert answer["code"] == "VAL-001"
    assert attribute in [f["field"] for f in answer["details"]["fields"]], answer
    assert by_mark(api, mark) == []


def test_missing_required_attribute_and_other_specversion_are_refused(api: Stack) -> None:
    topic = new_topic(api)
    mark = uuid.uuid4().hex
    message = ce_http.to_binary_event(event(mark))
    without_source = {k: v for k, v in message.headers.items() if k != "ce-source"}
    r = send(api, topic, ce_http.HTTPMessage(headers=without_source, body=message.body))
    assert r.status_code == 422 and r.json()["details"]["fields"][0]["field"] == "source", r.text
    r = send(api, topic, ce_http.HTTPMessage(headers={**message.headers, "ce-specversion": "0.3"}, body=message.body))
    assert r.status_code == 422 and r.json()["details"]["fields"][0]["field"] == "specversion", r.text
    structured = orjson.loads(ce_http.to_structured_event(event(mark)).body)
    del structured["type"]
    r = post(api, topic, orjson.dumps(structured), "application/cloudevents+json")
    assert r.status_code == 422 and r.json()["details"]["fields"][0]["field"] == "type", r.text
    assert by_mark(api, mark) == []


def test_data_that_is_not_json_is_refused_with_415(api: Stack) -> None:
    topic = new_topic(api)
    mark = uuid.uuid4().hex
    message = ce_http.to_binary_event(event(mark, data=f"mark {mark}", datacontenttype="text/plain"))
    assert message.headers["content-type"] == "text/plain"
    r = send(api, topic, message)
    assert r.status_code == 415, r.text
    assert "datacontenttype" in r.json()["message"]
    structured = orjson.loads(ce_http.to_structured_event(event(mark, data=b"\x00\x01")).body)
    assert "data_base64" in structured
    r = post(api, topic, orjson.dumps(structured), "application/cloudevents+json")
    assert r.status_code == 422 and r.json()["details"]["fields"][0]["field"] == "data_base64", r.text
    assert by_mark(api, mark) == []


def test_partitionkey_is_required_on_a_metric_topic(api: Stack) -> None:
    topic = new_topic(api, METRIC)
    mark = uuid.uuid4().hex
    r = send(api, topic, ce_http.to_binary_event(event(mark, tocsinmetrics='{"level": 3}')))
    assert r.status_code == 422, r.text
    assert r.json()["details"]["fields"][0]["field"] == "partitionkey"
    assert by_mark(api, mark) == []


def test_refused_batch_lists_each_event_by_index_and_stores_nothing(api: Stack) -> None:
    topic = new_topic(api)
    marks = [uuid.uuid4().hex for _ in range(3)]
    events = [orjson.loads(ce_http.to_structured_event(event(m)).body) for m in marks]
    events[1]["specversion"] = "2.0"
    del events[2]["id"]
    r = post(api, topic, orjson.dumps(events), BATCH, path="publish:batch")
    assert r.status_code == 422, r.text
    items = r.json()["details"]["items"]
    assert [(i["index"], i["fields"][0]["field"]) for i in items] == [(1, "specversion"), (2, "id")]
    assert all(by_mark(api, m) == [] for m in marks)


def test_wrong_mode_for_the_path_is_415(api: Stack) -> None:
    topic = new_topic(api)
    mark = uuid.uuid4().hex
    structured = ce_http.to_structured_event(event(mark))
    r = post(api, topic, orjson.dumps([orjson.loads(structured.body)]), BATCH)
    assert r.status_code == 415 and "publish:batch" in r.json()["message"], r.text
    r = send(api, topic, structured, path="publish:batch")
    assert r.status_code == 415, r.text
    assert by_mark(api, mark) == []


def test_a_repeated_event_is_dropped_by_its_source_and_id(api: Stack) -> None:
    topic = new_topic(api)
    mark = uuid.uuid4().hex
    first = send(api, topic, ce_http.to_binary_event(event(mark)))
    again = send(api, topic, ce_http.to_structured_event(event(mark)))
    assert first.status_code == again.status_code == 202
    keys = {r["attributes"]["idempotency_key"] for r in by_mark(api, mark)}
    assert keys == {f"ce/11//seismo/jma/id-{mark}"}  # one key: the worker drops the second


def test_another_organizations_topic_is_not_found(api: Stack) -> None:
    other = api.new_organization("Other org")
    topic = new_topic(api)
    message = ce_http.to_binary_event(event(uuid.uuid4().hex))
    url = f"{api.base_url}/v1/organizations/{api.org}/workflow_topics/{topic}/publish"
    headers = {"Authorization": f"Bearer {other['access_token']}", **message.headers}
    assert httpx.post(url, content=message.body, headers=headers).status_code == 404
