"""Integration tests that really start and stop local Kafka and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import time
import uuid
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from devstack.kafka import LocalKafka
from tests.support.postgres_local import LocalPostgres, find_pg_bin


def _port_closed(host: str, port: int) -> bool:
    """Return True if nothing accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return False
    except OSError:
        return True


async def _roundtrip(bootstrap: str, topic: str) -> tuple[int, bytes, bytes]:
    """Create a 2-partition topic, produce one record (acks=all), consume it back."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
        # the controller answers before every broker's metadata has the new topic's partitions (the
        # full suite once described none): poll with a deadline
        deadline = time.monotonic() + 30
        while True:
            described = await admin.describe_topics([topic])
            partitions = len(described[0]["partitions"])
            if partitions or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
    finally:
        await admin.close()

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        meta = await producer.send_and_wait(topic, b"hello", key=b"k1")
    finally:
        await producer.stop()
    assert meta.topic == topic

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"g-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        record = await asyncio.wait_for(consumer.getone(), 60)
    finally:
        await consumer.stop()
    assert record.key is not None and record.value is not None
    return partitions, record.key, record.value


async def _list_topics(bootstrap: str) -> list[str]:
    """Return the topic names the broker reports."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return list(await admin.list_topics())
    finally:
        await admin.close()


def test_local_kafka_starts_produces_consumes_and_stops(tmp_path: Path) -> None:
    """A real broker starts, serves a round trip, stops, and restarts on its data."""
    kafka = LocalKafka(tmp_path / "kafka")
    try:
        bootstrap = kafka.start()
        assert bootstrap == kafka.bootstrap == f"127.0.0.1:{kafka.port}"
        assert kafka.is_running()
        partitions, key, value = asyncio.run(_roundtrip(bootstrap, "tocsin.test.roundtrip"))
        assert (partitions, key, value) == (2, b"k1", b"hello")
        kafka.stop()
        assert _port_closed("127.0.0.1", kafka.port)
        # same instance, same address, same data: the topic survives a restart
        assert kafka.start() == bootstrap
        assert "tocsin.test.roundtrip" in asyncio.run(_list_topics(bootstrap))
    finally:
        kafka.stop()
    kafka.stop()  # idempotent
    assert not kafka.is_running()
    assert _port_closed("127.0.0.1", kafka.port)
    assert _port_closed("127.0.0.1", kafka.controller_port)
    log = (tmp_path / "kafka" / "kafka.log").read_text(errors="replace")
    assert "Kafka Server started" in log


def test_local_postgres_starts_creates_database_and_stops(tmp_path: Path) -> None:
    """A throwaway cluster starts, creates a database that answers, and stops."""
    assert find_pg_bin() is not None
    pg = LocalPostgres(tmp_path / "pg")
    try:
        url = pg.start()
        assert url == f"postgresql+asyncpg://postgres@127.0.0.1:{pg.port}/postgres"
        db_url = pg.create_database("tocsin_it")
        assert db_url.endswith(f":{pg.port}/tocsin_it")

        async def _select_one() -> int:
            conn = await asyncpg.connect(pg.dsn("tocsin_it"))
            try:
                return int(await conn.fetchval("select 1"))
            finally:
                await conn.close()

        assert asyncio.run(_select_one()) == 1
        assert pg.is_running()
    finally:
        pg.stop()
    pg.stop()  # idempotent
    assert not pg.is_running()
    assert _port_closed("127.0.0.1", pg.port)


def test_a_second_pytest_session_does_not_lock_the_session_server_out(
    postgres: LocalPostgres, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every pytest session that starts sets ``/tmp/pytest-of-<user>`` back to mode 0700. The
    session's server (run as ``postgres`` when the tests run as root) kept its files under it: a
    second session on the machine locked it out (PANIC on pg_control at the next checkpoint, every
    later connection refused: 17 tests of a full run failed so). Its files are elsewhere now."""
    root = next(p for p in tmp_path_factory.getbasetemp().parents if p.name.startswith("pytest-of-"))
    mode = root.stat().st_mode
    os.chmod(root, 0o700)  # what a second session does at its start

    async def checkpoint_then_select() -> int:
        conn = await asyncpg.connect(postgres.dsn(), timeout=10)
        try:
            await conn.execute("CHECKPOINT")  # the checkpointer opens global/pg_control
            return int(await conn.fetchval("select 1"))
        finally:
            await conn.close()

    try:
        assert asyncio.run(checkpoint_then_select()) == 1
        assert postgres.is_running()
    finally:
        os.chmod(root, stat.S_IMODE(mode))
