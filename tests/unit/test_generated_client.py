"""The generated Python client (clients/python/tocsin-client/, `make client`): every module imports, and
its publish calls build the requests the API accepts. The requests go to an in-process httpx transport
that reads them with the API's own checks (no broker, no server): what a live stack then does with them
is the end-to-end tests' business.

How a user publishes with the client::

    from tocsin_client import AuthenticatedClient
    from tocsin_client.api.publish import publish
    from tocsin_client.models import PublishJsonPublishRequest, PublishJsonPublishRequestData, PublishStatus

    client = AuthenticatedClient(base_url="https://tocsin.example", token=access_token)
    accepted = publish.sync(org_id, topic, client=client, body=PublishJsonPublishRequest(...))
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from tocsin_client import AuthenticatedClient
from tocsin_client.api.publish import publish, publish_batch
from tocsin_client.models import (
    BatchAccepted,
    ErrorOut,
    EventControl,
    PublishAccepted,
    PublishBatchJsonBodyItem,
    PublishBatchJsonBodyItemData,
    PublishBatchJsonPublishRequest,
    PublishBatchJsonPublishRequestData,
    PublishJsonBody,
    PublishJsonBodyData,
    PublishJsonBodyTocsinstatus,
    PublishJsonPublishRequest,
    PublishJsonPublishRequestData,
    PublishStatus,
)

from api.formats import cloudevents
from app.domain.events.limits import PublishLimits
from app.domain.events.publish import PublishRequest
from app.domain.events.publish_check import check_batch_at_once, check_publish
from scripts import client as generator

BASE = "http://tocsin.test"
ORG, TOPIC, TOKEN = "org-1", "db alerts", "tok-123"
PATH = "/v1/organizations/org-1/workflow_topics/db%20alerts/publish"


def test_every_module_of_the_committed_client_imports() -> None:
    """Each module imported in turn by a fresh interpreter (the one `make lint` also runs on the freshly
    generated client); publish.py and publish_batch.py used to raise NameError (Unset)."""
    assert generator.import_failures(generator.TARGET) == []


def _client(seen: list[httpx.Request], answer: Callable[[httpx.Request], httpx.Response]) -> AuthenticatedClient:
    def handle(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        return answer(request)

    return AuthenticatedClient(base_url=BASE, token=TOKEN, httpx_args={"transport": httpx.MockTransport(handle)})


def _accept_one(request: httpx.Request) -> httpx.Response:
    """The API's reading of a single publish (api/publishing.py): JSON, or a structured CloudEvent."""
    content_type = request.headers["content-type"]
    if cloudevents.is_structured(content_type):
        parsed = cloudevents.check_single(
            request.content, content_type, None, PublishLimits(), partition_key_required=True
        )
    else:
        assert content_type == "application/json"
        parsed = check_publish(request.content, PublishLimits(), partition_key_required=True)
    assert isinstance(parsed, PublishRequest)
    return httpx.Response(202, json={"id": f"ev-{parsed.partition_key}-{parsed.status}"})


def test_publish_sends_the_native_request_the_api_accepts() -> None:
    seen: list[httpx.Request] = []
    body = PublishJsonPublishRequest(
        data=PublishJsonPublishRequestData.from_dict({"host": "db-1", "load": 0.93}),
        status=PublishStatus.DRILL,
        event_control=EventControl(partition_key="db-1"),
    )
    with _client(seen, _accept_one) as client:
        accepted = publish.sync(ORG, TOPIC, client=client, body=body)
    assert isinstance(accepted, PublishAccepted)
    assert accepted.id == "ev-db-1-DRILL"
    (request,) = seen
    assert (request.method, request.url.raw_path.decode()) == ("POST", PATH)
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert json.loads(request.content) == {
        "data": {"host": "db-1", "load": 0.93},
        "status": "DRILL",
        "event_control": {"partition_key": "db-1"},
    }


def test_publish_sends_a_structured_cloudevent() -> None:
    seen: list[httpx.Request] = []
    body = PublishJsonBody(
        data=PublishJsonBodyData.from_dict({"host": "db-1"}),
        id="alert-7",
        source="monitoring/db",
        specversion="1.0",
        type_="disk full",
        partitionkey="db-1",
        tocsinstatus=PublishJsonBodyTocsinstatus.TEST,
    )
    with _client(seen, _accept_one) as client:
        accepted = publish.sync(ORG, TOPIC, client=client, body=body)
    assert isinstance(accepted, PublishAccepted)
    assert accepted.id == "ev-db-1-TEST"
    assert seen[0].headers["content-type"] == "application/cloudevents+json"


def test_a_refusal_comes_back_as_the_apis_error() -> None:
    seen: list[httpx.Request] = []
    error = {"code": "RES-001", "message": "no such workflow topic", "details": {}}
    body = PublishJsonPublishRequest(data=PublishJsonPublishRequestData(), status=PublishStatus.ACTUAL)
    with _client(seen, lambda _: httpx.Response(404, json=error)) as client:
        refused = publish.sync_detailed(ORG, TOPIC, client=client, body=body)
    assert refused.status_code == 404
    assert isinstance(refused.parsed, ErrorOut)
    assert refused.parsed.code == "RES-001"


def _accept_batch(request: httpx.Request) -> httpx.Response:
    """The API's reading of a batch: a JSON array of publish requests, or CloudEvents in batch mode."""
    content_type = request.headers["content-type"]
    if cloudevents.is_batch(content_type):
        events = json.loads(request.content)
        checked = [
            cloudevents.check_event(json.dumps(event).encode(), PublishLimits(), partition_key_required=False)
            for event in events
        ]
    else:
        assert content_type == "application/json"
        checked = check_batch_at_once(
            request.content, PublishLimits(), max_items=1000, max_request_bytes=1 << 22, partition_key_required=False
        )
    return httpx.Response(202, json={"ids": [f"ev-{n}" for n in range(len(checked))]})


@pytest.mark.parametrize("cloudevents_batch", [False, True], ids=["json", "cloudevents-batch"])
def test_publish_batch_sends_either_kind_of_array(cloudevents_batch: bool) -> None:
    """An array body's content type is told by its items (isinstance() refuses `list[Item]`)."""
    seen: list[httpx.Request] = []
    body: list[PublishBatchJsonBodyItem] | list[PublishBatchJsonPublishRequest]
    if cloudevents_batch:
        body = [
            PublishBatchJsonBodyItem(
                data=PublishBatchJsonBodyItemData.from_dict({"n": n}),
                id=f"e{n}",
                source="s",
                specversion="1.0",
                type_="t",
            )
            for n in range(2)
        ]
    else:
        body = [
            PublishBatchJsonPublishRequest(
                data=PublishBatchJsonPublishRequestData.from_dict({"n": n}), status=PublishStatus.ACTUAL
            )
            for n in range(2)
        ]
    with _client(seen, _accept_batch) as client:
        accepted = publish_batch.sync(ORG, TOPIC, client=client, body=body)
    assert isinstance(accepted, BatchAccepted)
    assert accepted.ids == ["ev-0", "ev-1"]
    expected = "application/cloudevents-batch+json" if cloudevents_batch else "application/json"
    assert seen[0].headers["content-type"] == expected
    assert seen[0].url.raw_path.decode() == f"{PATH}:batch"
