"""The worker's Faust tables: RocksDB (rocksdict) locally, compacted changelog topics in Kafka.

Both are co-partitioned with their source topic: a table key is the Kafka key of the records
that change it, and a value is written while the agent holds an event of that key's partition,
so the changelog partition, the local RocksDB partition and the source partition are the same
and move together on a rebalance. Values are bytes encoded by :mod:`tables.codecs`.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import defaultdict
from typing import Any, cast

import rocksdict
from aiokafka.errors import IllegalStateError
from faust.streams import _current_event
from faust.types import TP

from app.kafka import topics
from app.kafka.app import app, settings
from tables.codecs import PROGRESS_KEY, load_progress_state


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


def use_event(event: Any) -> None:
    """Make ``event`` the current event of this task, for the table reads and writes that follow
    (Faust picks the RocksDB and changelog partition from it).

    Only the task's context variable is set, never ``Stream.current_event``: during a
    ``take_events`` batch the stream's background reader has already set that attribute to the
    next message and reads it back once the batch is done; overwriting it there made the next
    batch hold a stale event in place of a new one (seen as a record skipped and one lost).
    """
    _current_event.set(weakref.ref(event))


def active_partitions(source: Any) -> frozenset[int]:
    """The partitions of ``source`` (a topic) this worker holds as active, hence its tables' too."""
    name = source.get_topic_name()
    return frozenset(tp.partition for tp in app.assignor.assigned_actives() if tp.topic == name)


async def write_values(table: Any, items: list[tuple[Any, bytes, bytes]]) -> None:
    """Write ``(event, key, value)`` items: the changelog records of each partition as one
    producer batch, awaited until the broker has them, then the local RocksDB partition with the
    persisted changelog offset (one atomic write) — what ``table[key] = value`` does, but one Kafka send per
    partition and batch instead of one per key.

    The changelog goes first so that RocksDB never holds a state the changelog lacks. Written the
    other way round, a worker killed between the two kept a newer state locally than in the
    changelog; it went on from the newer one, but a worker that later rebuilt the table from the
    changelog (a lost disk, or the partition moving to another worker) got the older state back
    while the records in between were committed: decisions from a stale state. Now a kill before
    the local write leaves RocksDB behind, and recovery replays the missing records from the
    changelog (from the persisted offset, which is only moved after the local write).

    ``table[key] = value`` queues each changelog record as a FutureMessage through Faust's
    producer buffer (about the cost of a whole ``send`` per key: a third of the control agent's
    time). Here the records go into an aiokafka ``BatchBuilder`` and out with ``send_batch``; the
    call returns only once every record is stored, so the caller acknowledges its events (and
    Faust commits their offsets) only after their states are in the changelog. The persisted
    offset kept in RocksDB is the one Faust's own callback would keep, so a restart replays only
    the changelog's tail.
    """
    if not items:
        return
    store = table.data
    changelog = table.changelog_topic.get_topic_name()
    producer = cast(Any, app.producer)._ensure_producer()  # the transport's AIOKafkaProducer, started with the app
    by_partition: dict[int, list[tuple[Any, bytes, bytes]]] = defaultdict(list)
    for item in items:
        by_partition[item[0].message.partition].append(item)
    sent: list[tuple[int, int, Any]] = []  # (partition, records in the batch, delivery future)
    local: dict[int, Any] = {}
    for partition, group in by_partition.items():
        local[partition] = writes = rocksdict.WriteBatch(raw_mode=True)  # as Faust's own changelog recovery writes
        batch, count = producer.create_batch(), 0
        for _event, key, value in group:
            writes.put(key, value)
            if batch.append(key=key, value=value, timestamp=None) is None:  # full: send it, start another
                if count:
                    sent.append((partition, count, await producer.send_batch(batch, changelog, partition=partition)))
                    batch, count = producer.create_batch(), 0
                if count or batch.append(key=key, value=value, timestamp=None) is None:
                    raise ValueError(f"a state of {len(value)} bytes does not fit in a producer batch")
            count += 1
        sent.append((partition, count, await producer.send_batch(batch, changelog, partition=partition)))
    results = await asyncio.gather(*(future for _p, _n, future in sent))
    last: dict[int, int] = {}
    for (partition, count, _future), meta in zip(sent, results, strict=True):
        last[partition] = max(last.get(partition, -1), meta.offset + count - 1)
    for partition, writes in local.items():
        # the states and the persisted offset in one RocksDB write (what set_persisted_offset stores)
        writes.put(store.offset_key, str(last[partition]).encode())
        store._db_for_partition(partition).write(writes)


def read_value(table: Any, key: bytes) -> bytes | None:
    """The stored bytes of ``key`` in the current event's partition (None if absent): the store
    read under ``table.get(key)`` without its serializer and sensor layers (values are raw bytes)."""
    value: bytes | None = table.data._get(key)
    return value


def generation() -> int:
    """Changes with every rebalance this worker takes part in (Faust counts them as they start)."""
    count: int = app.rebalancing_count
    return count


async def seek_back(source: Any, partition: int, offset: int) -> bool:
    """Send the consumer of ``source`` (a topic) on ``partition`` back to ``offset``; False if the
    partition is no longer assigned to this worker. Faust's ``seek_wait`` runs aiokafka's seek in
    the consumer's thread and moves Faust's read offset with it, so the records from ``offset``
    are delivered again instead of dropped as already read."""
    tp = TP(source.get_topic_name(), partition)
    if tp not in app.consumer.assignment():
        return False
    try:
        await app.consumer.seek_wait({tp: offset})
    except IllegalStateError:  # revoked between the check and the seek
        return False
    return True


def read_progress(table: Any) -> tuple[int, int] | None:
    """The next source offset the current event's partition must apply and the commit markers owed
    before it (None: never written)."""
    return load_progress_state(read_value(table, PROGRESS_KEY))
