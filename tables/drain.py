"""What the worker group has left to apply, read from the broker: its members, the offsets its stages
committed (what they applied), and the records beyond them.

``tocsin partitions`` (cli/partitions.py) refuses to grow a deployment that is not stopped and drained
by these readings; the tests read the quiet tail the same way. Describing a consumer group takes
aiokafka's low-level client and protocol classes (:class:`_DescribeGroups`), which only ``tables/``
may touch.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.client import AIOKafkaClient
from aiokafka.errors import KafkaError, for_code
from aiokafka.protocol.admin import DescribeGroupsRequest_v0, DescribeGroupsRequest_v1, DescribeGroupsRequest_v2
from aiokafka.protocol.api import Request

from app.kafka import topics
from app.kafka.security import client_args
from app.settings import Settings

# Source topics the worker's consumer group reads: each must be drained (the changelogs are read by
# recovery, not by the group; the retry topics by their own group, and their records carry no
# state, so a waiting retry goes on from its partition whatever the count).
DRAINED = tuple(t for t in topics.KEYED if t not in topics.CHANGELOGS)
T = TypeVar("T")


class _DescribeGroups(Request[DescribeGroupsRequest_v0 | DescribeGroupsRequest_v1 | DescribeGroupsRequest_v2]):  # type: ignore[misc]
    """DescribeGroups up to v2: aiokafka 0.14.0 pairs its v3 request with the v2 response schema, so
    ``AIOKafkaAdminClient.describe_consumer_groups`` fails on a current broker ("Buffer underrun")."""

    API_KEY = 15

    def __init__(self, groups: list[str]) -> None:
        self.groups = groups

    def build(self, request_struct_class: Any) -> Any:
        return request_struct_class(self.groups)


async def retrying(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, again while the broker answers with a retriable error for up to 30 s (a cluster
    whose offsets topic is still being created has no group coordinator yet)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return await call()
        except KafkaError as exc:
            if not exc.retriable or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.5)


async def members(admin: AIOKafkaAdminClient, settings: Settings, group: str) -> tuple[str, int]:
    """``(state, members)`` of a consumer group (``Dead``, 0 for one that never existed)."""
    return await retrying(lambda: _members(admin, settings, group))


async def _members(admin: AIOKafkaAdminClient, settings: Settings, group: str) -> tuple[str, int]:
    node = await admin.find_coordinator(group)
    client = AIOKafkaClient(**client_args(settings), request_timeout_ms=30000)
    await client.bootstrap()
    try:
        response = await client.send(node, _DescribeGroups([group]))
    finally:
        await client.close()
    (described,) = response.to_object()["groups"]
    if described["error_code"]:
        raise for_code(described["error_code"])(f"cannot describe the consumer group {group}")
    return described["state"], len(described["members"])


READ_TIMEOUT_S = 30.0  # reading the offsets left to their end: what is not read by then counts as unapplied


async def applied_offsets(admin: AIOKafkaAdminClient, settings: Settings) -> dict[TopicPartition, int]:
    """Per partition of each batch stage's source: the offset the stage committed
    (tables/batch_stage.py: the first record whose effects are not durable)."""
    applied: dict[TopicPartition, int] = {}
    for stage, source in topics.BATCH_STAGES.items():
        committed = await retrying(
            functools.partial(admin.list_consumer_group_offsets, topics.stage_group(settings, stage))
        )
        for tp, meta in committed.items():
            if tp.topic == settings.topic(source) and meta is not None and meta.offset >= 0:
                applied[tp] = meta.offset
    return applied


@dataclass
class Pending:
    """What keeps the deployment from being drained, by ``topic[partition]``: the first offset of a
    record the workers have not applied, and the partitions where a transaction is open (its
    last stable offset, its end offset)."""

    records: dict[str, int]
    open_transactions: dict[str, tuple[int, int]]

    def __bool__(self) -> bool:
        return bool(self.records or self.open_transactions)


async def pending(admin: AIOKafkaAdminClient, settings: Settings) -> Pending:
    """What the workers have still to apply, on every topic they must have drained."""
    names = [settings.topic(t) for t in DRAINED]
    counts = await topics.partition_counts(admin, names)
    # the previous release's group: where a stage that never committed a partition will start it
    committed = await retrying(lambda: admin.list_consumer_group_offsets(settings.worker_id))
    tps = [TopicPartition(name, p) for name, n in counts.items() for p in range(n)]
    applied = await applied_offsets(admin, settings)
    result = Pending({}, {})
    if not tps:
        return result
    everything = AIOKafkaConsumer(**client_args(settings), group_id=None, enable_auto_commit=False)
    consumer = AIOKafkaConsumer(
        **client_args(settings),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",  # the worker's own view: aborted records are never consumed
    )
    await everything.start()
    try:
        high = await everything.end_offsets(tps)  # with an open transaction's records
    finally:
        await everything.stop()
    await consumer.start()
    try:
        ends = await consumer.end_offsets(tps)  # the last stable offsets
        starts = await consumer.beginning_offsets(tps)
        behind = {}
        for tp in tps:
            where = f"{tp.topic}[{tp.partition}]"
            if high[tp] > ends[tp]:
                result.open_transactions[where] = (ends[tp], high[tp])
            start = applied.get(tp)  # what the stage applied
            if start is None:
                meta = committed.get(tp)
                start = meta.offset if meta is not None and meta.offset >= 0 else 0
            start = max(start, starts[tp])
            if start < ends[tp]:
                behind[tp] = start
        # The offsets left may hold commit markers or aborted records only: read them, as the worker would.
        if behind:
            consumer.assign(list(behind))
            for tp, offset in behind.items():
                consumer.seek(tp, offset)
            deadline = time.monotonic() + READ_TIMEOUT_S
            while behind and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=1000, max_records=500)
                for tp, records in batches.items():
                    if records and tp in behind:
                        result.records[f"{tp.topic}[{tp.partition}]"] = records[0].offset
                        del behind[tp]
                        consumer.pause(tp)
                for tp in list(behind):
                    if await consumer.position(tp) >= ends[tp]:
                        del behind[tp]
            for tp in behind:  # not read to its end in time: not known to be applied
                result.records[f"{tp.topic}[{tp.partition}]"] = await consumer.position(tp)
        return result
    finally:
        await consumer.stop()


async def read_partition(
    consumer: AIOKafkaConsumer, tp: TopicPartition, keep: Callable[[bytes], bool] = lambda _key: True
) -> dict[bytes, bytes]:
    """The live keys of one changelog partition (those ``keep`` accepts): the last value of each,
    tombstones applied."""
    consumer.assign([tp])
    await consumer.seek_to_beginning(tp)
    end = (await consumer.end_offsets([tp]))[tp]
    live: dict[bytes, bytes] = {}
    while await consumer.position(tp) < end:
        batches = await consumer.getmany(tp, timeout_ms=1000, max_records=5000)
        for record in batches.get(tp, []):
            if record.offset >= end or not keep(record.key):
                continue
            if record.value is None:
                live.pop(record.key, None)
            else:
                live[record.key] = record.value
    return live
