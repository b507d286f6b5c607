"""The worker's Faust tables: RocksDB (rocksdict) locally, compacted changelog topics in Kafka.

Both are co-partitioned with their source topic: a table key is the Kafka key of the records
that change it, and a value is written while the agent holds an event of that key's partition,
so the changelog partition, the local RocksDB partition and the source partition are the same
and move together on a rebalance. Values are bytes encoded by :mod:`tables.codecs`.
"""

from __future__ import annotations

from typing import Any

from app.kafka import topics
from app.kafka.app import app, idempotency_topic, settings
from tables.faust_adapter import FaustTable, consumer


def changelog_name(name: str) -> str:
    """A changelog belongs to its consumer group (the worker id), like Faust's own naming: two
    groups reading the same topics keep two states."""
    return settings.topic(f"{settings.worker_id}.{name}")


def _changelog(name: str) -> Any:
    return app.topic(
        changelog_name(name),
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.publish_partitions,
        internal=False,
        # As Faust declares its own changelogs: no stream reads them and nothing acknowledges their
        # records (recovery reads them into the table). With acks on, Faust took them for stream
        # partitions: its stream-timeout check logged "Stream has not started processing" as an
        # ERROR for every changelog partition it found behind its high-water mark (2,619 blocks in
        # an hour of `make run`), and a compaction hole went through the gap handling of our topics.
        acks=False,
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


# The control stage's state (key: the publish key; value: app.domain.pipeline.StoredControl) is no Faust
# table: the stage keeps it in stores of its own over the same changelog (streams/control_batch.py).
# Key: organization/topic/idempotency key; value: tables.codecs.StoredKey.
idempotency_keys = FaustTable(_table("idempotency", topics.IDEMPOTENCY_CHANGELOG))
worker_consumer = consumer
# the agents that keep their own progress in these tables (streams/progress.py) read from there
consumer.keep_aligned(idempotency_topic, idempotency_keys, "idempotency")
