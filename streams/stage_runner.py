"""Runs one batch stage of this worker process (tables/batch_stage.py): its consumer in the stage's
own group, its changelog restorer (a stage with state), its producer, and the dead-lettering of a
record that fails alone. Every stage of the worker starts here, the same way."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import ConsumerRecord

from app.kafka import topics
from app.kafka.partitioner import KeyPartitioner
from app.kafka.producer_errors import PRODUCER_FATAL
from app.kafka.security import client_args
from app.settings import Settings
from streams.batches import process_until_done
from streams.dead_letter import dead_letter_value
from tables import rocksdb_memory
from tables.acked_stage import AckedRecord, AckedStage
from tables.batch_stage import BatchStage, Checkpoint, Records, legacy_committed
from tables.codecs import PROGRESS_KEY, load_progress_state
from tables.partition_store import PartitionStore

log = logging.getLogger(__name__)


class StageHandler(Protocol):
    """What a stage does with each batch (tables/batch_stage.py ``Handler``), and after its commit."""

    stage: BatchStage | None  # the running stage, set when it starts (ticks and epochs read it)

    async def __call__(
        self, records: Records, checkpoint: Checkpoint, stores: Mapping[int, PartitionStore]
    ) -> None: ...

    def committed(self) -> None: ...


@dataclass
class StageSpec:
    """One stage: its name (its group is ``<worker id>.<name>``), its source topic's short name, its
    changelog's short name (None: a stage without state), and what runs beside its loop."""

    name: str
    source: str
    handler: StageHandler
    changelog: str | None = None
    max_records: int = 10_000
    fetch_seconds: float = 0.1
    # the broker holds a fetch until this many bytes are there or this long has passed: a sink
    # gathers its transactions' rows this way (a decision stage answers at once)
    fetch_min_bytes: int = 1
    fetch_max_wait_ms: int | None = None  # None: TOCSIN_WORKER_FETCH_WAIT_MS
    commit_every_s: float = 0.0  # a stage without state: commit applied batches together (0: each batch)
    background: list[Callable[[BatchStage], Coroutine[None, None, None]]] = field(default_factory=list)


def producer(settings: Settings) -> AIOKafkaProducer:
    """A stage's producer: idempotent, every record acknowledged by all in-sync replicas."""
    return AIOKafkaProducer(
        **client_args(settings),
        acks="all",
        enable_idempotence=True,
        linger_ms=2,
        partitioner=KeyPartitioner(),
        max_request_size=1_048_576,
    )


def consumer(
    settings: Settings, group: str, fetch_min_bytes: int = 1, fetch_max_wait_ms: int | None = None
) -> AIOKafkaConsumer:
    """A stage's consumer in ``group``: offsets committed by the stage, transactions' records once committed."""
    return AIOKafkaConsumer(
        fetch_min_bytes=fetch_min_bytes,
        fetch_max_wait_ms=fetch_max_wait_ms if fetch_max_wait_ms is not None else settings.worker_fetch_wait_ms,
        **client_args(settings),
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        session_timeout_ms=10_000,
        heartbeat_interval_ms=2_000,
        # a revocation waits for the batch in flight, at most one retry back-off (30 s) past its
        # last attempt: the member stays in the group meanwhile
        rebalance_timeout_ms=60_000,
        max_partition_fetch_bytes=4 * 1_048_576,
    )


async def run_stage(settings: Settings, spec: StageSpec) -> None:
    """The stage ``spec`` of this worker process, until cancelled."""
    rocksdb_memory.install(settings)  # the stores of every stage share one cache and memtable budget
    source = settings.topic(spec.source)
    changelog = topics.changelog_topic(settings, spec.changelog) if spec.changelog is not None else None
    stage_consumer = consumer(
        settings, topics.stage_group(settings, spec.name), spec.fetch_min_bytes, spec.fetch_max_wait_ms
    )
    restorer = (
        AIOKafkaConsumer(**client_args(settings), enable_auto_commit=False, group_id=None)
        if changelog is not None
        else None
    )
    admin = AIOKafkaAdminClient(**client_args(settings))
    dead_letters = settings.topic(topics.DEAD_LETTER)

    async def new_producer() -> AIOKafkaProducer:
        fresh = producer(settings)
        await fresh.start()
        return fresh

    async def legacy(tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Where the previous release's agent left each partition: its group's committed offset, or
        the next offset its table said it must apply where that is lower (that release could commit
        past what it had applied; an earlier start is safe: what was applied is skipped or
        deduplicated)."""
        found = await legacy_committed(admin, settings.worker_id, tps)
        for tp in tps:
            store = stage.stores.get(tp.partition)
            applied = load_progress_state(store.get(PROGRESS_KEY)) if store is not None else None
            if applied is not None:
                found[tp] = min(found.get(tp, applied[0]), applied[0])
        return found

    stage = BatchStage(
        spec.name,
        source,
        changelog,
        stage_consumer,
        restorer,
        producer(settings),
        settings.worker_data_path / "stages",
        spec.handler,
        max_records=spec.max_records,
        fetch_timeout_ms=max(1, round(spec.fetch_seconds * 1000)),
        legacy_offsets=legacy,
        on_committed=spec.handler.committed,
        restore_log_seconds=settings.worker_recovery_log_seconds,
        new_producer=new_producer,
        commit_every_s=spec.commit_every_s,
    )
    spec.handler.stage = stage

    async def skip(rec: ConsumerRecord[bytes, bytes], reason: str) -> None:
        value = dead_letter_value(spec.name, rec.topic, rec.partition, rec.offset, rec.value, reason)
        sender = stage.producer
        try:
            await (await sender.send(dead_letters, value, key=rec.key))
        except PRODUCER_FATAL:
            await stage.renew_producer(sender)
            raise

    tasks: list[asyncio.Task[None]] = []
    stages.append(stage)
    try:  # whatever fails to start is stopped with the rest, and the stage leaves the list
        await asyncio.gather(
            stage.producer.start(), admin.start(), *([restorer.start()] if restorer is not None else [])
        )
        stage_consumer.subscribe([source], listener=stage)
        await stage_consumer.start()
        tasks = [asyncio.create_task(run(stage)) for run in spec.background]
        await stage.run(skip, process_until_done)
    finally:
        for task in tasks:
            task.cancel()
        stages.remove(stage)
        for store in stage.stores.values():
            store.close()
        await asyncio.gather(
            stage_consumer.stop(),
            stage.producer.stop(),
            admin.close(),
            *([restorer.stop()] if restorer is not None else []),
            return_exceptions=True,
        )


async def run_acked_stage(
    settings: Settings,
    name: str,
    source: str,
    handle: Callable[[AsyncIterator[AckedRecord]], Awaitable[None]],
    max_records: int,
) -> None:
    """A stage whose records are settled one by one (tables/acked_stage.py): ``handle`` takes them
    as they arrive and acknowledges each once its effects are durable; until cancelled."""
    stage_consumer = consumer(settings, topics.stage_group(settings, name))
    admin = AIOKafkaAdminClient(**client_args(settings))

    async def legacy(tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return await legacy_committed(admin, settings.worker_id, tps)

    stage = AckedStage(
        name,
        settings.topic(source),
        stage_consumer,
        max_records=max_records,
        legacy_offsets=legacy,
        commit_every_s=settings.worker_commit_seconds,
    )
    stages.append(stage)
    try:
        await admin.start()
        stage_consumer.subscribe([stage.source], listener=stage)
        await stage_consumer.start()
        await handle(stage.records())
    finally:
        stages.remove(stage)
        await asyncio.gather(stage_consumer.stop(), admin.close(), return_exceptions=True)


async def run_forever(name: str, run: Callable[[], Awaitable[None]]) -> None:
    """A stage, started again (from scratch) after anything but cancellation ends it."""
    while True:
        try:
            await run()
        except Exception as exc:
            log.exception("%s stage restarting after error: %s", name, exc)
            await asyncio.sleep(1.0)


# the running stages of this process (the operations endpoints read them)
stages: list[BatchStage | AckedStage] = []
expected: list[str] = []  # the names of the stages this process runs (streams/worker.py)
