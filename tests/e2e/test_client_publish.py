"""The generated Python client (clients/python/) against a live stack: a publish and a batch
publish through it open incidents, and the event's trace is read back through it, as the guide
(docs/guides/cli-and-client.md) shows a user."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from tocsin_client import AuthenticatedClient
from tocsin_client.api.incidents import get_event_trace
from tocsin_client.api.publish import publish, publish_batch
from tocsin_client.models import (
    BatchAccepted,
    EventControl,
    EventInfo,
    EventTraceOut,
    PublishAccepted,
    PublishBatchJsonPublishRequest,
    PublishBatchJsonPublishRequestData,
    PublishJsonPublishRequest,
    PublishJsonPublishRequestData,
    PublishStatus,
)

from tests.e2e.test_publish_to_incident import setup_incident_workflow
from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_the_generated_client_publishes_and_reads_the_trace(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory().start()
    with stack.client() as client:
        setup_incident_workflow(client)
    api = AuthenticatedClient(base_url=stack.base_url, token=stack.credentials["access_token"], timeout=30)
    with api:
        one = publish.sync(
            stack.org,
            "quake",
            client=api,
            body=PublishJsonPublishRequest(
                data=PublishJsonPublishRequestData.from_dict({"magnitude": 6.1}),
                status=PublishStatus.ACTUAL,
                event=EventInfo(id=f"single-{uuid.uuid4().hex[:8]}", name="M6.1"),
                event_control=EventControl(partition_key="tohoku"),
            ),
        )
        assert isinstance(one, PublishAccepted), one
        batch = publish_batch.sync(
            stack.org,
            "quake",
            client=api,
            body=[
                PublishBatchJsonPublishRequest(
                    data=PublishBatchJsonPublishRequestData.from_dict({"magnitude": 5.0 + n}),
                    status=PublishStatus.ACTUAL,
                    event=EventInfo(id=f"batch-{n}-{uuid.uuid4().hex[:8]}", name=f"M{5 + n}"),
                )
                for n in range(2)
            ],
        )
        assert isinstance(batch, BatchAccepted), batch
        assert len(batch.ids) == 2 and all(i.startswith("evt_") for i in batch.ids)
        with stack.client() as client:
            incidents = wait_for(
                lambda: (found := all_incidents(client)) and len(found) >= 3 and found, 60, "incidents"
            )
        assert {i["server_event_id"] for i in incidents} == {one.id, *batch.ids}
        trace = get_event_trace.sync(stack.org, one.id, client=api)
        assert isinstance(trace, EventTraceOut), trace
        assert trace.id == one.id
        steps = [s["step"] for s in trace.steps]
        assert steps[:3] == ["accepted", "control", "workflows"], steps
