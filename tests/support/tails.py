"""The quiet-tail check, read from outside the workers: every source partition of a stack applied
up to its last stable offset.

What "applied" means per topic follows the worker: the control and idempotency agents store their
next offset with their states (the progress key in their changelogs, streams/progress.py); the
sinks and deliveries count a record applied once its offset is committed by the worker group. A
partition whose applied offset is behind its last stable offset passes only if the offsets in
between hold no committed record (transaction markers, aborted publishes): a ``read_committed``
consumer reading them gets nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from app.kafka import topics
from app.kafka.security import client_args
from app.settings import Settings
from tables.codecs import PROGRESS_KEY, load_progress
from tests.support.stack import Stack, wait_for

# source topic → the changelog whose progress key says what its agent applied (None: committed offsets)
SOURCES = {
    topics.PUBLISH: topics.CONTROL_CHANGELOG,
    topics.IDEMPOTENCY: topics.IDEMPOTENCY_CHANGELOG,
    topics.ACTIONS_INCIDENT: None,
    topics.TRACES: None,
    **dict.fromkeys(topics.ACTIONS.values()),
}


@dataclass(frozen=True)
class Behind:
    topic: str
    partition: int
    applied: int | None
    end: int

    def __str__(self) -> str:
        return f"{self.topic}[{self.partition}] applied {self.applied} < last stable offset {self.end}"


def _client_args(stack: Stack) -> dict[str, object]:
    """The stack's broker address and security settings (TLS, SASL), as its processes use them."""
    kafka = {k.removeprefix("TOCSIN_").lower(): v for k, v in stack.env.items() if k.startswith("TOCSIN_KAFKA_")}
    return client_args(Settings.model_validate(kafka))


def _consumer(stack: Stack) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(**_client_args(stack), isolation_level="read_committed", enable_auto_commit=False)


async def _changelog_progress(consumer: AIOKafkaConsumer, changelog: str) -> dict[int, int]:
    """The last progress value of each partition of ``changelog`` (read to its end)."""
    partitions = consumer.partitions_for_topic(changelog) or set()
    tps = [TopicPartition(changelog, p) for p in partitions]
    if not tps:
        return {}
    consumer.assign(tps)
    await consumer.seek_to_beginning(*tps)
    ends = await consumer.end_offsets(tps)
    progress: dict[int, int] = {}
    remaining = {tp for tp in tps if ends[tp] > 0}
    while remaining:
        batches = await consumer.getmany(*remaining, timeout_ms=1000)
        for tp, records in batches.items():
            for record in records:
                if record.key == PROGRESS_KEY and record.value is not None:
                    offset = load_progress(record.value)
                    if offset is not None:
                        progress[tp.partition] = offset
        for tp in list(remaining):
            if await consumer.position(tp) >= ends[tp]:
                remaining.discard(tp)
    return progress


async def _nothing_committed_between(consumer: AIOKafkaConsumer, tp: TopicPartition, start: int, end: int) -> bool:
    consumer.assign([tp])
    consumer.seek(tp, start)
    while await consumer.position(tp) < end:
        batches = await consumer.getmany(tp, timeout_ms=1000)
        if any(record.offset < end for record in batches.get(tp, [])):
            return False
    return True


async def behind(stack: Stack) -> list[Behind]:
    """Every source partition of ``stack`` whose applied offset is behind its last stable offset,
    with a committed record in between."""
    env = stack.env
    prefix, group = env["TOCSIN_TOPIC_PREFIX"], env["TOCSIN_WORKER_ID"]
    consumer = _consumer(stack)
    admin = AIOKafkaAdminClient(**_client_args(stack))
    await consumer.start()
    await admin.start()
    try:
        await consumer.topics()  # every topic's metadata, for partitions_for_topic
        committed = {tp: meta.offset for tp, meta in (await admin.list_consumer_group_offsets(group)).items()}
        found: list[Behind] = []
        for source, changelog in SOURCES.items():
            name = prefix + source
            partitions = consumer.partitions_for_topic(name) or set()
            tps = [TopicPartition(name, p) for p in sorted(partitions)]
            if not tps:
                continue
            ends = await consumer.end_offsets(tps)
            if changelog is not None:
                stored = await _changelog_progress(consumer, f"{prefix}{group}.{changelog}")
                applied: dict[int, int | None] = {tp.partition: stored.get(tp.partition) for tp in tps}
            else:
                applied = {tp.partition: committed.get(tp) for tp in tps}
            for tp in tps:
                start, end = applied[tp.partition], ends[tp]
                if start is not None and start >= end:
                    continue
                if await _nothing_committed_between(consumer, tp, start or 0, end):
                    continue
                found.append(Behind(name, tp.partition, start, end))
        return found
    finally:
        await consumer.stop()
        await admin.close()


def assert_quiet_tails(stack: Stack, bound_s: float = 60.0) -> None:
    """Within ``bound_s``, every source partition applied to its last stable offset (checked only
    while a worker of ``stack`` runs: nothing applies records otherwise)."""
    if not any(proc.poll() is None for proc in stack.workers):
        return
    last: list[Behind] = []

    def quiet() -> bool:
        nonlocal last
        last = asyncio.run(behind(stack))
        return not last

    try:
        wait_for(quiet, bound_s, "every source partition applied to its last stable offset", 1.0)
    except AssertionError:
        raise AssertionError(
            f"quiet tails: {len(last)} source partitions still behind after {bound_s:.0f} s: "
            + "; ".join(map(str, last[:10]))
        ) from None
