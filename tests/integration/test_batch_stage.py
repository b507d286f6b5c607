"""The batch stage engine (tables/batch_stage.py, tables/changelog_restore.py) on a real broker:
whole fetches decided by a handler, outputs + changelog + offsets + local store per checkpoint, a
stage stopped mid-stream and another started on a wiped data directory that restores its stores
from the changelog and goes on where the first one committed, and a first start that takes the
previous release's committed offsets."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from devstack.kafka import LocalKafka
from streams.batches import process_until_done
from tables.batch_stage import BatchStage, Checkpoint, Records, legacy_committed
from tables.partition_store import PartitionStore

PARTITIONS = 3


async def _topics(bootstrap: str, *names: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names])
    finally:
        await admin.close()


async def _publish(bootstrap: str, topic: str, keys: list[str], start: int, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        futures = [
            await producer.send(topic, f"{i}".encode(), key=keys[i % len(keys)].encode())
            for i in range(start, start + count)
        ]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


class Summer:
    """A stage that keeps, per key, the sum and count of the values it decided, and sends
    ``key=sum`` to an output topic per record."""

    def __init__(self, output: str) -> None:
        self.output = output
        self.batches = 0

    async def __call__(self, records: Records, checkpoint: Checkpoint, stores: Mapping[int, PartitionStore]) -> None:
        self.batches += 1
        for partition, batch in records.items():
            pending: dict[bytes, tuple[int, int]] = {}
            for rec in batch:
                if rec.key in pending:
                    total, n = pending[rec.key]
                else:
                    raw = stores[partition].get(rec.key)
                    total, n = (0, 0) if raw is None else tuple(map(int, raw.split(b",")))  # type: ignore[assignment]
                total, n = total + int(rec.value), n + 1
                pending[rec.key] = (total, n)
                checkpoint.send(self.output, f"{rec.key.decode()}={total}".encode(), partition=partition)
            for key, (total, n) in pending.items():
                checkpoint.put(partition, key, f"{total},{n}".encode())


async def _start(bootstrap: str, group: str, source: str, changelog: str, output: str, data: Path, **kw: Any) -> Any:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
    )
    restorer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await asyncio.gather(restorer.start(), producer.start())
    handler = Summer(output)
    stage = BatchStage("sum", source, changelog, consumer, restorer, producer, data, handler, max_records=50, **kw)
    consumer.subscribe([source], listener=stage)
    await consumer.start()

    async def skip(rec: Any, reason: str) -> None:
        raise AssertionError(f"no record of this test fails: {reason}")

    task = asyncio.create_task(stage.run(skip, process_until_done))

    async def stop() -> None:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for store in stage.stores.values():
            store.close()
        await asyncio.gather(consumer.stop(), restorer.stop(), producer.stop())

    return stage, stop


async def _wait(check: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def _committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        return {tp.partition: o for tp, o in (await legacy_committed(admin, group, tps)).items()}
    finally:
        await admin.close()


def _names(last: str) -> tuple[str, str, str, str]:
    """Fresh names: the source, the changelog, the output topic, and a group called ``last``."""
    tag = uuid.uuid4().hex[:8]
    return f"src-{tag}", f"cl-{tag}", f"out-{tag}", f"{last}-{tag}"


def _sums(stage: BatchStage) -> dict[bytes, bytes]:
    return {k: v for store in stage.stores.values() for k, v in store.items()}


def _expected(keys: list[str], count: int) -> dict[bytes, bytes]:
    sums: dict[str, tuple[int, int]] = {}
    for i in range(count):
        total, n = sums.get(keys[i % len(keys)], (0, 0))
        sums[keys[i % len(keys)]] = (total + i, n + 1)
    return {k.encode(): f"{t},{n}".encode() for k, (t, n) in sums.items()}


def test_a_stage_restarted_on_a_wiped_directory_restores_and_goes_on_where_it_committed(
    kafka: LocalKafka, tmp_path: Path
) -> None:
    source, changelog, output, group = _names("g")
    keys = [f"key-{i}" for i in range(40)]

    async def scenario() -> None:
        await _topics(kafka.bootstrap, source, changelog, output)
        await _publish(kafka.bootstrap, source, keys, 0, 2000)
        stage, stop = await _start(kafka.bootstrap, group, source, changelog, output, tmp_path / "a")
        try:
            await _wait(lambda: sum(stage.applied.values()) >= 2000, 60, "the first 2,000 records applied")
            assert _sums(stage) == _expected(keys, 2000)
        finally:
            await stop()  # also when the check fails: a stage left running would hang asyncio.run
        assert await _committed(kafka.bootstrap, group, source) == stage.applied

        # more records while no stage runs; the next one starts on an empty directory
        await _publish(kafka.bootstrap, source, keys, 2000, 1000)
        stage2, stop2 = await _start(kafka.bootstrap, group, source, changelog, output, tmp_path / "b")
        try:
            await _wait(lambda: sum(stage2.applied.values()) >= 3000, 60, "all 3,000 records applied")
            assert stage2.restore_progress.records_done >= len(keys)  # read back, not decided again
            assert _sums(stage2) == _expected(keys, 3000)
        finally:
            await stop2()

    asyncio.run(scenario())


def test_a_first_start_takes_the_offsets_the_previous_release_committed(kafka: LocalKafka, tmp_path: Path) -> None:
    source, changelog, output, legacy = _names("legacy")
    keys = ["k"]

    async def scenario() -> None:
        await _topics(kafka.bootstrap, source, changelog, output)
        await _publish(kafka.bootstrap, source, keys, 0, 30)
        # the previous release applied every record of partition p up to 10 (its group committed 10)
        old = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=legacy, enable_auto_commit=False)
        await old.start()
        ends = await old.end_offsets([TopicPartition(source, p) for p in range(PARTITIONS)])
        partition = next(tp.partition for tp, end in ends.items() if end)
        old.assign([TopicPartition(source, partition)])
        await old.commit({TopicPartition(source, partition): 10})
        await old.stop()
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
        await admin.start()

        async def legacy_offsets(tps: list[TopicPartition]) -> dict[TopicPartition, int]:
            return await legacy_committed(admin, legacy, tps)

        stage, stop = await _start(
            kafka.bootstrap, f"g-{legacy}", source, changelog, output, tmp_path, legacy_offsets=legacy_offsets
        )
        try:
            await _wait(lambda: stage.applied.get(partition) == 30, 60, "the partition applied to its end")
            assert _sums(stage) == {b"k": f"{sum(range(10, 30))},20".encode()}  # records 0..9 were the old release's
        finally:
            await stop()
            await admin.close()

    asyncio.run(scenario())


def test_a_partition_assigned_again_is_caught_up_with_what_its_owner_meanwhile_wrote(
    kafka: LocalKafka, tmp_path: Path
) -> None:
    """Defect (found in review): a store this worker kept open across a rebalance was not restored
    again, so the changelog records another owner wrote meanwhile (this worker dropped from the group
    and back, unseen) were missing, and the next records were decided from the stale state."""
    source, changelog, output, group = _names("g")
    keys = ["only"]

    async def scenario() -> None:
        await _topics(kafka.bootstrap, source, changelog, output)
        await _publish(kafka.bootstrap, source, keys, 0, 10)
        stage, stop = await _start(kafka.bootstrap, group, source, changelog, output, tmp_path)
        try:
            await _caught_up(stage, tmp_path)
        finally:
            await stop()

    async def _caught_up(stage: BatchStage, tmp_path: Path) -> None:
        await _wait(lambda: sum(stage.applied.values()) >= 10, 60, "the first 10 records applied")
        [partition] = [p for p, store in stage.stores.items() if store.get(b"only") is not None]
        # another owner of the partition decided more and wrote its state to the changelog
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, acks="all")
        await producer.start()
        await producer.send_and_wait(changelog, b"1000000,50", key=b"only", partition=partition)
        await producer.stop()
        tps = {TopicPartition(source, p) for p in range(PARTITIONS)}
        await stage.on_partitions_revoked(tps)  # the partitions come back to this worker
        await stage.on_partitions_assigned(tps)
        await _publish(kafka.bootstrap, source, keys, 10, 1)  # the value 10
        await _wait(lambda: sum(stage.applied.values()) >= 11, 60, "the 11th record applied")
        assert stage.stores[partition].get(b"only") == b"1000010,51"

    asyncio.run(scenario())
