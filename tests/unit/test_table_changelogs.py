"""The tables' changelog topics are declared as Faust declares its own: no stream reads them, so
nothing acknowledges their records (tables/control.py)."""

from __future__ import annotations

import pytest

from app.kafka.app import publish_topic
from tables.control import idempotency_keys
from tables.faust_adapter import FaustTable


@pytest.mark.parametrize("table", [idempotency_keys], ids=["idempotency"])
def test_a_changelog_takes_no_acknowledgements(table: FaustTable) -> None:
    """With acks on, Faust's conductor counted the changelog among the topics streams acknowledge,
    and its stream-timeout check (``AIOKafkaConsumerThread.verify_event_path``) logged "Stream has
    not started processing" as an ERROR for each changelog partition behind its high-water mark."""
    assert table.table.changelog_topic.acks is False


def test_the_agents_topics_still_take_acknowledgements() -> None:
    """The stream partitions keep the check: a stuck stream is still reported (and committed only
    through acknowledged offsets)."""
    assert publish_topic.acks is True
