"""Starting before the broker: every way a down or half-up broker shows through the admin client
is waited for; a topic the broker refuses for good, or a bad configuration, is not."""

from __future__ import annotations

import logging

import pytest
from aiokafka.errors import KafkaConnectionError

import app.kafka.topics
from app.kafka.topics import BrokerNotReady, ensure_topics_when_reachable
from app.settings import Settings
from tables.kafka_access import check_access

SETTINGS = Settings(kafka_bootstrap="127.0.0.1:1")


def _scripted(monkeypatch: pytest.MonkeyPatch, outcomes: list[BaseException | None]) -> list[float]:
    """ensure_topics raises each of ``outcomes`` in turn (None: succeeds); the waits, returned."""
    waits: list[float] = []

    async def ensure(_settings: Settings, _check: object) -> None:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome

    async def no_wait(delay: float) -> None:
        waits.append(delay)

    monkeypatch.setattr(app.kafka.topics, "ensure_topics", ensure)
    monkeypatch.setattr(app.kafka.topics.asyncio, "sleep", no_wait)
    return waits


async def test_each_kind_of_unreachable_broker_is_waited_for(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    outcomes: list[BaseException | None] = [
        KafkaConnectionError("Unable to bootstrap from [('127.0.0.1', 1)]"),
        TimeoutError(),  # aiokafka: no node became ready within the request timeout
        ConnectionRefusedError(111, "Connection refused"),
        AttributeError("'NoneType' object has no attribute 'nodeId'"),  # no controller known yet
        BrokerNotReady("cannot create Kafka topic t.publish yet: error 38"),  # fewer live brokers than replicas
        KafkaConnectionError("again"),
        KafkaConnectionError("again"),
        None,
    ]
    waits = _scripted(monkeypatch, outcomes)
    with caplog.at_level(logging.WARNING, logger="app.kafka.topics"):
        await ensure_topics_when_reachable(SETTINGS, check_access)
    assert outcomes == []
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert len(caplog.records) == 7
    assert all("broker 127.0.0.1:1 not reachable" in r.getMessage() for r in caplog.records)


async def test_a_topic_refused_for_good_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = _scripted(monkeypatch, [RuntimeError("cannot create Kafka topic t.publish: error 40 policy")])
    with pytest.raises(RuntimeError, match="error 40"):
        await ensure_topics_when_reachable(SETTINGS, check_access)
    assert waits == []
