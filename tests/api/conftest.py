"""Fixtures of the API's tests against the real broker."""

from __future__ import annotations

import uuid

import pytest

from app.kafka.topics import ensure_topics
from app.settings import Settings
from devstack.kafka import LocalKafka


@pytest.fixture
async def fresh_topics(kafka: LocalKafka) -> Settings:
    """Settings naming topics of their own on the test broker, created."""
    settings = Settings(kafka_bootstrap=kafka.bootstrap, topic_prefix=f"p{uuid.uuid4().hex[:8]}.")
    await ensure_topics(settings)
    return settings
