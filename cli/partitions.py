"""``tocsin partitions --count N``: grow a stopped, drained deployment to N partitions.

Kafka only adds partitions, and a key's partition is murmur2(key) mod the count
(:class:`app.kafka.partitioner.KeyPartitioner`), so growing moves most keys. Every keyed topic and
both changelogs grow together, so that every stage stays co-partitioned. The worker's tables keep
a key's state in the changelog partition of the source record that changed it, and for both tables
that record's Kafka key is the table key (the state key for the control table, the
organization/topic/idempotency key for the idempotency table; ticks are keyed like the state). So
the partition a key belongs to after the grow is the partitioner's for its table key, and a key
that moves is re-written there (its stored source offset reset: the new partition's offsets start
again) and deleted from its old partition with a tombstone. The previous release's per-partition
progress keys stay where they are (only an upgrade reads them, once).

The workers' local RocksDB needs no wipe: a worker restores each partition from its persisted
changelog offset on, which replays the re-written values and the tombstones (a new partition has no
local data and is read whole).

Records still unconsumed would be decided under the new layout against the state of their old
partition, so the command refuses unless the deployment is drained and stopped: no member in the
worker's consumer groups, no transaction open on a keyed topic they consume (its records are beyond
the last stable offset, where a read_committed reader sees nothing yet), and no record the workers
have not applied (after the offset each stage's group committed: the first record whose effects are
not durable; a partition a stage never committed, after the previous release's group's offset).
While it runs a marker topic exists (``<prefix><worker id>.partitions-grow``): an API or worker
refuses to start then (app/kafka/topics.py), and running the command again finishes a grow that
stopped midway (every step is idempotent: partitions only added up to N, a key moved again
overwrites its own copy). The marker is deleted at the end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError

from app.errors import TocsinError
from app.kafka import topics
from app.kafka.partitioner import KeyPartitioner
from app.kafka.security import client_args, start_client
from app.settings import Settings
from cli.common import say
from tables.codecs import (
    UnreadableValue,
    dump_control,
    dump_key,
    is_progress_key,
    load_control,
    load_key,
)
from tables.drain import Pending, members, pending, read_partition
from tables.kafka_access import check_access


class Refused(TocsinError):
    """The deployment cannot be grown now; the message says why and what to do."""


def retry_group(settings: Settings) -> str:
    return f"{settings.worker_id}.retry"  # streams/retry.py


@dataclass
class Moved:
    """Keys of one changelog: how many live keys were read, how many moved partition."""

    keys: int = 0
    moved: int = 0
    unreadable: int = 0  # values that could not be decoded: moved unchanged


def relocated(changelog: str, value: bytes) -> bytes:
    """``value`` as stored in its new partition: the source offset it carries is the old
    partition's, and the new partition's records start again from 0 (a record at or below a
    stored offset is skipped as applied), so it becomes -1 (none applied there yet)."""
    if changelog == topics.CONTROL_CHANGELOG:
        stored = load_control(value)
        assert stored is not None
        return dump_control(replace(stored, offset=-1))
    key = load_key(value)
    assert key is not None
    return dump_key(replace(key, offset=-1))


async def _admin(settings: Settings) -> AIOKafkaAdminClient:
    admin = AIOKafkaAdminClient(**client_args(settings), request_timeout_ms=30000)
    await start_client(admin, settings, check_access)  # a refused login or certificate: one line (cli/main.py)
    return admin


async def check_stopped(admin: AIOKafkaAdminClient, settings: Settings) -> None:
    """Refuse while a worker (or its retry scheduler) is a member of its consumer group."""
    busy = []
    stages = [topics.stage_group(settings, stage) for stage in topics.BATCH_STAGES]
    for group in (settings.worker_id, retry_group(settings), *stages):
        state, count = await members(admin, settings, group)
        if count:
            busy.append(f"{group} ({count} members, {state})")
    if busy:
        raise Refused(
            f"workers are running: consumer groups {', '.join(busy)}; stop every worker of TOCSIN_WORKER_ID="
            f"{settings.worker_id} first (a killed one leaves its group after the 10 s session timeout)"
        )


def _listed(found: Pending) -> str:
    """The partitions with records not yet applied, and from which offset, then those where a
    transaction is open, for a message."""
    listed = [f"{where} from offset {offset}" for where, offset in sorted(found.records.items())]
    listed += [
        f"{where}: a transaction is open (records from offset {stable} to {end} neither committed nor aborted)"
        for where, (stable, end) in sorted(found.open_transactions.items())
    ]
    return ", ".join(listed)


def _check_worker_group(settings: Settings, existing: set[str]) -> None:
    """Refuse a ``TOCSIN_WORKER_ID`` whose workers never ran here while another group's did: a typo
    would grow the topics and leave the real group's control state where the new count does not
    look for it."""
    suffix = f".{topics.CONTROL_CHANGELOG}"
    if topics.changelog_topic(settings, topics.CONTROL_CHANGELOG) in existing:
        return
    prefix = settings.topic("")
    others = sorted(
        name[len(prefix) : -len(suffix)] for name in existing if name.startswith(prefix) and name.endswith(suffix)
    )
    if others:
        raise Refused(
            f"the worker group {settings.worker_id!r} (TOCSIN_WORKER_ID) has no control state here, but "
            f"{', '.join(repr(o) for o in others)} has: run this with the workers' TOCSIN_WORKER_ID"
        )


async def check_drained(admin: AIOKafkaAdminClient, settings: Settings) -> None:
    found = await pending(admin, settings)
    if found.open_transactions:
        raise Refused(
            f"the deployment is not drained: {_listed(found)}. A running API holds it open, or one that "
            f"stopped mid-publish (the broker aborts its transaction after transaction.timeout.ms, or its "
            f"next start does). Stop every API, wait for the transaction to end, drain the workers as "
            f"below if records remain, then run this again"
        )
    if found:
        raise Refused(
            f"the deployment is not drained: records not yet applied by the workers in {_listed(found)}. Stop "
            f"publishing (stop the API), start the workers with the current TOCSIN_PUBLISH_PARTITIONS until "
            f"their consumer lag is 0, stop them, then run this again"
        )


async def create_marker(admin: AIOKafkaAdminClient, settings: Settings) -> None:
    spec = NewTopic(topics.grow_marker(settings), 1, settings.replication_factor)
    response = await admin.create_topics([spec])
    for name, code, *rest in response.topic_errors:
        if code not in (0, TopicAlreadyExistsError.errno):
            raise RuntimeError(f"cannot create the marker topic {name}: error {code} {rest}")


async def add_partitions(
    admin: AIOKafkaAdminClient, settings: Settings, count: int, progress: Callable[[str], None]
) -> None:
    counts = await topics.partition_counts(admin, topics.keyed_topics(settings))
    grow = {name: NewPartitions(total_count=count) for name, n in counts.items() if n < count}
    for name in sorted(counts):
        progress(f"{name}: {counts[name]} partitions" + (f" → {count}" if name in grow else " (done)"))
    if grow:
        await admin.create_partitions(grow)
    # The broker answers before the new partitions have a leader everywhere: wait until they do.
    deadline = time.monotonic() + 60
    while not await _all_led(admin, list(counts), count):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the new partitions of {sorted(counts)} have no leader after 60 s")
        await asyncio.sleep(0.5)


async def _all_led(admin: AIOKafkaAdminClient, names: list[str], count: int) -> bool:
    described = await admin.describe_topics(names)
    return all(
        t["error_code"] == 0 and len(t["partitions"]) == count and all(p["leader"] >= 0 for p in t["partitions"])
        for t in described
    )


async def relayout(
    settings: Settings, count: int, changelogs: list[str], progress: Callable[[str], None]
) -> dict[str, Moved]:
    """Move every changelog key whose partition changed: its value to the new partition, then a
    tombstone in the old one (in that order, so a crash in between leaves two copies, never none;
    running again writes the same value again and the tombstone)."""
    partitioner = KeyPartitioner()
    everything = list(range(count))
    report: dict[str, Moved] = {}
    consumer = AIOKafkaConsumer(
        **client_args(settings),
        group_id=None,
        enable_auto_commit=False,
        max_partition_fetch_bytes=8 * 1024 * 1024,
    )
    producer = AIOKafkaProducer(**client_args(settings), acks="all", enable_idempotence=True)
    await consumer.start()
    await producer.start()
    try:
        for changelog in changelogs:
            name = topics.changelog_topic(settings, changelog)
            moved = report[changelog] = Moved()
            arrived: set[tuple[int, bytes]] = set()  # keys this run moved into a partition read later
            for partition in everything:
                tp = TopicPartition(name, partition)
                live = await read_partition(consumer, tp)
                moves = []
                for key, value in live.items():
                    # the source partition's next offset stays with it; a key moved here is counted once
                    if is_progress_key(key) or (partition, key) in arrived:
                        continue
                    moved.keys += 1
                    target = partitioner(key, everything, everything)
                    if target == partition:
                        continue
                    try:
                        value = relocated(changelog, value)
                    except UnreadableValue as exc:  # moved as it is: the agent dead-letters it when it reads it
                        moved.unreadable += 1
                        progress(f"{name}[{partition}]: key {key!r} unreadable, moved unchanged: {exc}")
                    moves.append((key, value, target))
                    arrived.add((target, key))
                if moves:
                    sent = [await producer.send(name, key=k, value=v, partition=t) for k, v, t in moves]
                    await asyncio.gather(*sent)
                    tombstones = [
                        await producer.send(name, key=k, value=None, partition=partition) for k, _, _ in moves
                    ]
                    await asyncio.gather(*tombstones)
                moved.moved += len(moves)
                progress(f"{name}[{partition}]: {len(moves)} keys moved to their new partition")
    finally:
        await producer.stop()
        await consumer.stop()
    return report


async def grow(settings: Settings, count: int, progress: Callable[[str], None] = say) -> dict[str, Moved]:
    """Grow the deployment of ``settings`` (its topic prefix and worker id) to ``count`` partitions."""
    admin = await _admin(settings)
    try:
        existing = set(await admin.list_topics())
        counts = await topics.partition_counts(admin, [t for t in topics.keyed_topics(settings) if t in existing])
        if not counts:
            raise Refused(
                f"no keyed topics with prefix {settings.topic_prefix!r} on {settings.kafka_bootstrap}: nothing to "
                f"grow (an API or worker creates them with TOCSIN_PUBLISH_PARTITIONS at its first start)"
            )
        if max(counts.values()) > count:
            raise Refused(
                f"topics already have up to {max(counts.values())} partitions; Kafka cannot take partitions away"
            )
        _check_worker_group(settings, existing)
        resuming = topics.grow_marker(settings) in existing
        progress(
            f"growing {settings.topic_prefix}* (worker group {settings.worker_id}) to {count} partitions"
            + (" (resuming a grow that stopped midway)" if resuming else "")
        )
        await check_stopped(admin, settings)
        await check_drained(admin, settings)
        progress("no worker running, every keyed topic drained")
        await create_marker(admin, settings)
        await add_partitions(admin, settings, count, progress)
    finally:
        await admin.close()
    # a worker that never started has no changelog yet (it creates them at N when it first does)
    changelogs = [c for c in topics.CHANGELOGS if topics.changelog_topic(settings, c) in counts]
    report = await relayout(settings, count, changelogs, progress)
    admin = await _admin(settings)
    try:
        if topics.grow_marker(settings) in set(await admin.list_topics()):
            response = await admin.delete_topics([topics.grow_marker(settings)])
            for name, code in response.topic_error_codes:
                if code not in (0, UnknownTopicOrPartitionError.errno):
                    raise RuntimeError(f"cannot delete the marker topic {name}: error {code}")
    finally:
        await admin.close()
    moved = ", ".join(
        f"{c}: {m.moved} of {m.keys} keys moved" + (f" ({m.unreadable} unreadable)" if m.unreadable else "")
        for c, m in report.items()
    )
    progress(f"done ({moved}); start the workers and the API with TOCSIN_PUBLISH_PARTITIONS={count}")
    admin = await _admin(settings)
    try:  # the command cannot see producers: a publish that came during the grow is reported
        late = await pending(admin, settings)
    finally:
        await admin.close()
    if late:
        listed = _listed(late)
        raise PublishedDuringGrow(
            f"records were published while the grow ran (was an API still running?): {listed}. Those routed by "
            f"the old count are decided against the state of their old partition (a moved key starts afresh "
            f"there); check their traces once the workers run"
        )
    return report


class PublishedDuringGrow(TocsinError):
    """The grow is done, but records arrived while it ran."""


def cmd_partitions(settings: Settings, count: int) -> None:
    try:
        asyncio.run(grow(settings, count))
    except Refused as exc:
        raise SystemExit(f"tocsin: partitions refused: {exc}") from None
    except PublishedDuringGrow as exc:
        raise SystemExit(f"tocsin: partitions: {exc}") from None
    except topics.UNREACHABLE as exc:
        raise SystemExit(
            f"tocsin: partitions: the broker {settings.kafka_bootstrap} failed ({exc!r}); run the same command "
            f"again once it answers (a grow that had started resumes where it stopped)"
        ) from None
