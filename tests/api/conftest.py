"""Fixtures of the API's tests against the real broker."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from app.kafka.topics import ensure_topics
from app.settings import Settings
from devstack.kafka import LocalKafka
from tables.kafka_access import check_access
from tests.support.stack import Stack


@pytest.fixture
async def fresh_topics(kafka: LocalKafka) -> Settings:
    """Settings naming topics of their own on the test broker, created."""
    settings = Settings(kafka_bootstrap=kafka.bootstrap, topic_prefix=f"p{uuid.uuid4().hex[:8]}.")
    await ensure_topics(settings, check_access)
    return settings


@pytest.fixture(scope="session")
def ingress_api(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One API process (no worker) on the session broker, shared by the ingress-format modules
    (Alertmanager, CloudEvents, PagerDuty): each uses topics and marks of its own, so one start
    serves all three (the suite's time counts)."""
    stack = Stack(tmp_path_factory.mktemp("ingress"), kafka.bootstrap)
    stack.bootstrap()
    stack.start_api()
    yield stack
    stack.stop()
