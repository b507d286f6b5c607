"""The delivery kinds' one list (app/domain/delivery/kinds.py): every place that routes, runs or
limits a delivery follows it, so a kind cannot be half wired."""

from __future__ import annotations

import pytest

from app.domain.delivery import kinds
from app.domain.workflows.workflow import ActionType
from app.domain.workflows.workflow_stage import DELIVERY_KINDS
from app.kafka import topics
from app.settings import Settings
from streams import worker
from streams.attempts import receiver_of
from streams.resources import EXECUTORS, make_executor


def test_each_action_type_that_delivers_has_one_kind() -> None:
    delivering = {a.value for a in ActionType} - {"RUN_OPERATION_BOOK"}
    assert set(kinds.BY_ACTION) == delivering
    assert {k.action: k.name for k in kinds.KINDS} == DELIVERY_KINDS


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_each_kind_has_its_topic_stage_and_executor(kind: kinds.DeliveryKind) -> None:
    assert topics.ACTIONS[kind.name] == kind.topic
    assert kind.topic in topics.KEYED  # created with the other keyed topics, drained before a grow
    assert topics.BATCH_STAGES[kind.stage] == kind.topic
    assert kind.stage in worker.STAGE_NAMES  # the worker runs its stage
    assert make_executor(kind.name, Settings()).kind == kind.name
    assert EXECUTORS.keys() == kinds.BY_NAME.keys()


def test_only_per_host_kinds_share_slots_by_host() -> None:
    item = {"content": {"url": "https://Hooks.Example.com:8443/x"}}
    assert receiver_of("WEBHOOK", item) == "https://hooks.example.com:8443"
    assert receiver_of("EMAIL", item) == "EMAIL"
    assert receiver_of("PUSH", item) == "PUSH"


def test_an_unknown_kind_has_no_executor() -> None:
    with pytest.raises(ValueError, match="no executor"):
        make_executor("FAX", Settings())
