"""The worker's Faust tables: RocksDB (rocksdict) locally, compacted changelog topics in Kafka.

Both are co-partitioned with their source topic: a table key is the Kafka key of the records
that change it, and a value is written while the agent holds an event of that key's partition,
so the changelog partition, the local RocksDB partition and the source partition are the same
and move together on a rebalance. Values are bytes encoded by :mod:`tables.codecs`.
"""

from __future__ import annotations

from typing import Any

from app import topics
from app.faust_app import app, settings


def _changelog(name: str) -> Any:
    return app.topic(
        settings.topic(name),
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.publish_partitions,
        internal=False,
    )


def _table(name: str, changelog: str) -> Any:
    return app.Table(
        name,
        default=None,
        key_type=bytes,  # bytes → the "raw" codec: keys and values are stored as given
        value_type=bytes,
        partitions=settings.publish_partitions,
        changelog_topic=_changelog(changelog),
    )


# Key: the publish key (organization/topic/status/partition key); value: tables.codecs.StoredControl.
control_states = _table("control-state", topics.CONTROL_CHANGELOG)
# Key: organization/topic/idempotency key; value: tables.codecs.StoredKey.
idempotency_keys = _table("idempotency", topics.IDEMPOTENCY_CHANGELOG)
