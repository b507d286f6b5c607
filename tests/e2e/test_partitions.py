"""Growing a deployment's partitions (``tocsin partitions``) on the real broker, API and worker:
control state and idempotency keys written under the old count carry on under the new one, an
API or worker refuses to start on topics of another count, and the grow refuses a deployment that
is running or not drained."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import rocksdict
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from app.kafka.partitioner import KeyPartitioner
from app.kafka.topics import (
    ensure_topics,
    grow_marker,
    keyed_topics,
    partition_counts,
    stage_group,
)
from app.settings import Settings
from cli.partitions import PublishedDuringGrow, Refused, add_partitions, check_drained, create_marker, grow
from devstack.kafka import LocalKafka
from tables.kafka_access import check_access
from tests.e2e.test_event_control import decision_of, incidents_when, publish, timeline, trace_of
from tests.support.effects import listen
from tests.support.scaling import METRIC_PROFILE, spec_decisions
from tests.support.stack import ROOT, Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

OLD, NEW = 2, 5
# Before the grow each key's episode is open. HOLD keys have two of the three values below the
# threshold the release needs (stable-exit state); PEAK keys hold a peak of 15.
HOLD = {f"st-{i}": [15.0, 12.0, 3.0, 2.0] for i in range(6)}
PEAK = {f"pk-{i}": [15.0, 12.0] for i in range(6)}
# After it: one more low value releases a HOLD episode; a PEAK key's equal value is suppressed (the
# peak held), a higher one notifies the same episode, and three low values release it.
AFTER = {**{k: [1.0] for k in HOLD}, **{k: [15.0, 16.0, 3.0, 2.0, 1.0] for k in PEAK}}
IDEMPOTENCY_KEYS = [f"k-{i}" for i in range(8)]
_MOVED = re.compile(r"(control-state|idempotency)-changelog: (\d+) of (\d+) keys moved")


def cli(stack: Stack, *args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=ROOT,
        env={**stack.env, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def publish_with_key(client: httpx.Client, partition_key: str, idempotency_key: str) -> str:
    body: dict[str, Any] = {
        "status": "ACTUAL",
        "data": {},
        "attributes": {"idempotency_key": idempotency_key},
        "event_control": {"partition_key": partition_key, "metrics": {"level": 1}},  # below T: no episode
    }
    r = client.post("/workflow_topics/river/publish", json=body)
    assert r.status_code == 202, r.text
    event_id: str = r.json()["id"]
    return event_id


async def die_after_adding_partitions(stack: Stack) -> None:
    """The first steps of ``tocsin partitions --count NEW``, as a run killed right after them left them."""
    env = stack.env
    settings = Settings(
        kafka_bootstrap=env["TOCSIN_KAFKA_BOOTSTRAP"],
        topic_prefix=env["TOCSIN_TOPIC_PREFIX"],
        worker_id=env["TOCSIN_WORKER_ID"],
        publish_partitions=NEW,
    )
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        await create_marker(admin, settings)
        await add_partitions(admin, settings, NEW, print)
    finally:
        await admin.close()


def test_grow_carries_episodes_and_idempotency_keys_to_the_new_count(stack_factory: Callable[..., Stack]) -> None:
    # Transactional publishes: their commit markers leave offsets no record fills, and the drained
    # check must pass them (the harder case; without transactions offsets are contiguous).
    stack = stack_factory(partitions=OLD, extra_env={"TOCSIN_PUBLISH_TRANSACTIONS": "true"}).start()
    before = {**HOLD, **PEAK}
    with stack.client() as client:
        setup_topic(client, "river", METRIC_PROFILE)
        sent = {k: [publish(client, "river", k, metrics={"level": v}) for v in values] for k, values in before.items()}
        firsts = {key: publish_with_key(client, f"id-{n}", key) for n, key in enumerate(IDEMPOTENCY_KEYS)}
        for k, values in before.items():
            assert [decision_of(client, e) for e in sent[k]] == spec_decisions(values), k
        assert all(trace_of(client, e)["idempotency"]["outcome"] == "first" for e in firsts.values())
        incidents = {i["server_event_id"]: i for i in incidents_when(client, len(before))}
        episode = {k: incidents[sent[k][0]]["id"] for k in before}  # one incident per open episode

        # A running worker: refused.
        running = cli(stack, "partitions", "--count", str(NEW))
        assert running.returncode != 0 and "workers are running" in running.stderr, running.stderr

        # A record no worker consumed yet: refused, naming where it waits.
        stack.stop_worker()
        late = publish(client, "river", "late", metrics={"level": 1})
        undrained = cli(stack, "partitions", "--count", str(NEW))
        assert undrained.returncode != 0 and "not drained" in undrained.stderr, undrained.stderr
        assert f"{stack.env['TOCSIN_TOPIC_PREFIX']}publish[" in undrained.stderr, undrained.stderr
        # Drain: the worker, still at the old count, consumes it; then everything stops.
        stack.start_worker()
        stack.wait_worker_ready()
        assert decision_of(client, late) == "SUPPRESS"
    stack.stop_worker()
    stack.stop_api()

    # A grow that died after adding the partitions, before moving a key: its marker stays, and the
    # worker refuses to start even with the new count; running the command again finishes the grow.
    asyncio.run(die_after_adding_partitions(stack))
    midway = cli(stack, "worker", timeout=120, TOCSIN_PUBLISH_PARTITIONS=str(NEW))
    assert midway.returncode != 0 and "stopped midway" in midway.stderr, midway.stderr[-2000:]
    assert f"tocsin partitions --count {NEW}" in midway.stderr, midway.stderr

    grown = cli(stack, "partitions", "--count", str(NEW))
    assert grown.returncode == 0, grown.stderr
    assert "resuming a grow that stopped midway" in grown.stderr, grown.stderr
    moved = {name: (int(n), int(of)) for name, n, of in _MOVED.findall(grown.stderr)}
    print(f"\n{grown.stderr}")
    assert moved.keys() == {"control-state", "idempotency"}, grown.stderr
    assert moved["control-state"][1] >= len(before) + len(IDEMPOTENCY_KEYS) + 1  # every state key read
    assert moved["idempotency"][1] == len(IDEMPOTENCY_KEYS)
    # murmur2 mod 5 differs from mod 2 for most keys: if none moved the test proves nothing
    assert moved["control-state"][0] > 0 and moved["idempotency"][0] > 0, moved

    # The API and the worker refuse to start on the old count now, saying what differs and what to do.
    for role in ("worker", "api"):
        old = cli(stack, role, timeout=120, TOCSIN_PUBLISH_PARTITIONS=str(OLD))
        assert old.returncode != 0, f"the {role} started on mismatched topics: {old.stderr[-2000:]}"
        assert f"TOCSIN_PUBLISH_PARTITIONS is {OLD}" in old.stderr and f"has {NEW}" in old.stderr, old.stderr
        assert f"TOCSIN_PUBLISH_PARTITIONS={NEW}" in old.stderr and "Traceback" not in old.stderr, old.stderr

    # Growing again to the same count is a check that moves nothing.
    again = cli(stack, "partitions", "--count", str(NEW))
    assert again.returncode == 0 and {n for n, _ in (m[1:] for m in _MOVED.findall(again.stderr))} == {"0"}, (
        again.stderr
    )

    stack.configure(TOCSIN_PUBLISH_PARTITIONS=str(NEW))
    stack.start_api()
    stack.start_worker()
    stack.wait_worker_ready()
    with stack.client() as client:
        after = {k: [publish(client, "river", k, metrics={"level": v}) for v in values] for k, values in AFTER.items()}
        for k, values in AFTER.items():
            expected = spec_decisions(before[k] + values)[len(before[k]) :]
            assert [decision_of(client, e, timeout=120) for e in after[k]] == expected, k
        # Idempotency keys still deduplicate, whatever the partition key of the repeat.
        for n, key in enumerate(IDEMPOTENCY_KEYS):
            repeat = trace_of(client, publish_with_key(client, f"other-{n}", key))
            assert (
                repeat["idempotency"]["outcome"] == "duplicate" and repeat["idempotency"]["duplicate_of"] == firsts[key]
            )
        assert trace_of(client, publish_with_key(client, "id-new", "k-new"))["idempotency"]["outcome"] == "first"

        # The same episodes: no new incident, each one's NOTIFYs on its timeline once, each released.
        found = listen(lambda: all_incidents(client))
        assert sorted(i["id"] for i in found) == sorted(episode.values()), "an incident opened or lost across the grow"

        def resolved() -> bool:
            return all(i["status"] == "RESOLVED" for i in all_incidents(client))

        wait_for(resolved, 60, "every episode released")
        for k in before:
            decisions = spec_decisions(before[k] + AFTER[k])
            kinds = [e["kind"] for e in timeline(client, episode[k])]
            assert kinds == ["CREATED"] + ["UPDATED"] * (decisions.count("NOTIFY") - 1) + ["RESOLVED"], (k, kinds)

    # The worker's local RocksDB ended consistent with the new layout: it restored the moved keys in
    # their new partitions and applied the tombstones in their old ones (no key left behind).
    stack.stop_worker()
    assert_local_tables_follow(stack.worker_data_dir(), NEW, expect=len(before) + len(IDEMPOTENCY_KEYS))


def assert_local_tables_follow(data_dir: Path, count: int, expect: int) -> None:
    """Every key of the worker's RocksDB partitions (``<table>-<partition>.db``) is in the partition
    the partitioner gives it under ``count`` partitions (Faust's and the progress keys aside)."""
    everything = list(range(count))
    partitioner = KeyPartitioner()
    misplaced, seen = [], 0
    for path in sorted(data_dir.rglob("*.db")):
        partition = int(path.stem.rpartition("-")[2])
        db = rocksdict.Rdict(
            str(path), options=rocksdict.Options(raw_mode=True), access_type=rocksdict.AccessType.read_only()
        )
        try:
            for key, _value in db.items():
                if key.startswith((b"\x00", b"__faust")):
                    continue
                seen += 1
                if partitioner(key, everything, everything) != partition:
                    misplaced.append((path.name, key))
        finally:
            db.close()
    assert misplaced == [], f"keys left in a partition they no longer belong to: {misplaced}"
    assert seen >= expect, f"only {seen} keys in the local tables under {data_dir}"


async def test_a_publish_during_the_grow_is_reported(kafka: LocalKafka) -> None:
    """The command cannot see producers: a record that arrives while it runs is named at the end
    (exit 1), after the grow itself is done."""
    tag = uuid.uuid4().hex[:8]
    settings = Settings(
        kafka_bootstrap=kafka.bootstrap, topic_prefix=f"g{tag}.", worker_id=f"w{tag}", publish_partitions=2
    )
    await ensure_topics(settings, check_access)  # a deployment whose worker never ran: every topic empty
    published: list[int] = []

    async def publish_one() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap)
        await producer.start()
        try:
            published.append((await producer.send_and_wait(settings.topic("publish"), b"{}", key=b"k")).offset)
        finally:
            await producer.stop()

    def progress(line: str) -> None:
        # Once the grow moves keys, a producer it cannot see publishes: on a thread and loop of its
        # own, awaited here, so the record is stored before the grow goes on.
        if "moved to their new partition" in line and not published:
            sender = threading.Thread(target=asyncio.run, args=(publish_one(),))
            sender.start()
            sender.join(timeout=60)

    with pytest.raises(PublishedDuringGrow, match=rf"g{tag}\.publish\[\d\] from offset 0"):
        await grow(settings, 3, progress)
    assert published == [0]
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    try:  # the grow itself finished: every keyed topic at 3, the marker gone
        names = await admin.list_topics()
        assert set((await partition_counts(admin, keyed_topics(settings))).values()) == {3}
        assert grow_marker(settings) not in names
    finally:
        await admin.close()


async def test_drained_means_applied_by_the_tables_with_no_transaction_open(kafka: LocalKafka) -> None:
    """Issue 30, item 1: what the control stage applied is its own group's committed offset (the first
    record whose effects are not durable), not the worker group's, which may be ahead of it; and a transaction still
    open holds its records back from a read_committed end offset. Before the fix both were taken
    for drained: the committed offset 4 was past the applied 1, and the open transaction's record
    lay beyond the last stable offset."""
    tag = uuid.uuid4().hex[:8]
    settings = Settings(
        kafka_bootstrap=kafka.bootstrap, topic_prefix=f"d{tag}.", worker_id=f"w{tag}", publish_partitions=1
    )
    await ensure_topics(settings, check_access)
    publish_tp = TopicPartition(settings.topic("publish"), 0)
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    api = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, transactional_id=f"api-{tag}", enable_idempotence=True)
    tables = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    await api.start()
    await tables.start()

    async def transaction(count: int, commit: bool = True) -> None:
        await api.begin_transaction()
        for _ in range(count):
            await api.send_and_wait(publish_tp.topic, b"{}", key=b"k", partition=0)
        if commit:
            await api.commit_transaction()

    async def applied(offset: int) -> None:  # what the control stage committed (tables/batch_stage.py)
        stage = AIOKafkaConsumer(
            bootstrap_servers=kafka.bootstrap, group_id=stage_group(settings, "control"), enable_auto_commit=False
        )
        await stage.start()
        try:
            stage.assign([publish_tp])
            await stage.commit({publish_tp: offset})
        finally:
            await stage.stop()

    async def refusal() -> str:
        with pytest.raises(Refused) as refused:
            await check_drained(admin, settings)
        return str(refused.value)

    try:
        await transaction(3)  # records at 0, 1, 2; the commit marker at 3
        # The group committed past every record, but the table applied only the one at 0.
        group = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=settings.worker_id)
        await group.start()
        try:
            group.assign([publish_tp])
            await group.commit({publish_tp: 4})
        finally:
            await group.stop()
        await applied(1)
        assert f"{publish_tp.topic}[0] from offset 1" in await refusal()

        await applied(3)  # all three applied: the one offset left holds the commit marker
        await check_drained(admin, settings)

        await transaction(1, commit=False)  # an API's transaction still open (its record at 4)
        message = await refusal()
        assert "transaction" in message and f"{publish_tp.topic}[0]" in message, message
        await api.commit_transaction()  # its marker at 5
        assert f"{publish_tp.topic}[0] from offset 4" in await refusal()  # committed, not applied yet
        await applied(5)
        await check_drained(admin, settings)
    finally:
        await tables.stop()
        await api.stop()
        await admin.close()


def test_a_wrong_worker_id_is_refused_in_one_line_and_changes_nothing(stack_factory: Callable[..., Stack]) -> None:
    """``TOCSIN_WORKER_ID`` naming no deployment (a typo): no changelog of that id exists, so nothing
    can be carried; the command says so in one line (no traceback) and the topics keep their count.
    The outside attacker's run: a raw traceback ending in CancelledError, three times in three."""
    stack = stack_factory(partitions=OLD).start()
    with stack.client() as client:
        assert client.post("/workflow_topics", json={"key": "river"}).status_code == 201
    stack.stop_worker()
    for count in (str(NEW), str(OLD)):
        wrong = cli(stack, "partitions", "--count", count, timeout=120, TOCSIN_WORKER_ID="no-such-deployment")
        assert wrong.returncode != 0, wrong.stdout
        assert "Traceback" not in wrong.stderr and "no-such-deployment" in wrong.stderr, wrong.stderr[-3000:]
    assert set(asyncio.run(keyed_counts(stack)).values()) == {OLD}, "the refused command changed a topic"


async def keyed_counts(stack: Stack) -> dict[str, int]:
    settings = Settings(
        kafka_bootstrap=stack.env["TOCSIN_KAFKA_BOOTSTRAP"], topic_prefix=stack.env["TOCSIN_TOPIC_PREFIX"]
    )
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        return await partition_counts(admin, keyed_topics(settings))
    finally:
        await admin.close()
