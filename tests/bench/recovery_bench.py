"""Bench section ``recovery``: how long a worker takes to rebuild 100,000 keys of control state
from the changelog.

The worker decides one METRIC publish for each of ``KEYS`` partition keys (written to the publish
topic beforehand, as the API would), so its control changelog holds a state per key; then it
stops, its data directory is wiped, and it starts again: the time until its ``/readyz`` answers
200 is measured, with the recovery's own figures from that ``/readyz`` (records read, seconds).
The baseline, in the same run: the same worker restarted on its intact data directory (nothing
to read back), the cost of a start itself.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.bench.common import PROFILE, cpu_seconds, progress, stack_settings, write_publishes
from tests.support.stack import Stack, wait_for

KEYS = 100_000
# seconds to rebuild 100,000 keys from the changelog (issue 31; Kafka Streams: > 50,000 records/s a thread)
TARGET_S = 2.0


def _publishes(keys: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """One publish per partition key."""
    for i in range(keys):
        key = f"station-{i:06d}"
        yield (
            key,
            {
                "status": "ACTUAL",
                "data": {"level": 12.0},
                "event": {"name": f"{key} level"},
                "event_control": {"partition_key": key, "metrics": {"level": 12.0}},
            },
        )


def _decisions(url: str) -> float:
    """Every decision the worker made since it started (``tocsin_decisions_total``, all labels)."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    lines = [line for line in text.splitlines() if line.startswith("tocsin_decisions_total{")]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


def _restart(stack: Stack, wipe: bool, broker_pid: int | None) -> dict[str, Any]:
    """Stop the worker, optionally wipe its data directory, start it, time it until ready; the
    worker's CPU seconds from its start until ready, and the broker's over the same time."""
    stack.stop_worker()
    if wipe:
        shutil.rmtree(stack.worker_data_dir())
    broker_before = cpu_seconds(broker_pid)
    started = time.monotonic()
    stack.start_worker()
    stack.wait_worker_ready(timeout=600)
    seconds = time.monotonic() - started
    cpu = {"worker": cpu_seconds(stack.workers[-1].pid), "broker": cpu_seconds(broker_pid) - broker_before}
    body = httpx.get(f"{stack.worker_urls[-1]}/readyz", timeout=10).json()
    return {"ready_seconds": seconds, "recovery": body.get("recovery"), "cpu_s": cpu}


def run_recovery_section(kafka_bootstrap: str, work_dir: Path, broker_pid: int | None = None) -> dict[str, Any]:
    stack = Stack(work_dir / "recovery", kafka_bootstrap)
    try:
        stack.start()
        with stack.client() as client:
            r = client.post(
                "/workflow_topics", json={"key": "levels", "name_en": "levels", "control_policy_profile": PROFILE}
            )
            assert r.status_code == 201, r.text
            topic_id = r.json()["id"]
        settings = stack_settings(stack)
        progress(f"recovery: {KEYS:,} publishes of distinct partition keys to the publish topic")
        asyncio.run(write_publishes(settings, stack.org, topic_id, _publishes(KEYS)))
        stack.stop_api()
        progress("recovery: the worker decides them (one control state per key)")
        wait_for(lambda: _decisions(stack.worker_urls[-1]) >= KEYS, 1800, f"the worker to decide {KEYS} publishes", 1)
        progress("recovery: restart on the intact data directory (baseline)")
        baseline = _restart(stack, wipe=False, broker_pid=broker_pid)
        progress("recovery: restart on a wiped data directory")
        rebuilt = _restart(stack, wipe=True, broker_pid=broker_pid)
        stack.stop_worker()
        progress("recovery: the same changelog restored in bulk (tables/changelog_restore.py) into empty stores")
        bulk = asyncio.run(_bulk_restore(settings, stack.var_dir / "bulk-restore"))
    finally:
        stack.stop()
    recovery = rebuilt["recovery"] or {}
    if recovery.get("records_total", 0) < KEYS:
        raise RuntimeError(f"the worker read back {recovery} from its changelogs, fewer than {KEYS} keys")
    per_100k = recovery["seconds"] * 100_000 / KEYS
    ready_per_100k = (rebuilt["ready_seconds"] - baseline["ready_seconds"]) * 100_000 / KEYS
    return {
        "bulk": bulk,
        "bulk_seconds_per_100k_keys": bulk["seconds"] * 100_000 / KEYS,
        "keys": KEYS,
        "partitions": settings.publish_partitions,
        "baseline": baseline,
        "rebuilt": rebuilt,
        "recovery_seconds_per_100k_keys": per_100k,
        "target_s": TARGET_S,
        "ready_seconds_over_baseline_per_100k_keys": ready_per_100k,
    }


async def _bulk_restore(settings: Any, data_dir: Path) -> dict[str, Any]:
    """The control changelog the worker wrote, read into empty stores by the batch stages' bulk restore:
    seconds and this process's CPU seconds (the restore runs in the bench process itself)."""
    from aiokafka import AIOKafkaConsumer

    from app.kafka import topics
    from app.kafka.security import client_args
    from tables.changelog_restore import RestoreProgress, restore
    from tables.partition_store import PartitionStore

    def open_store(p: int) -> PartitionStore:
        return PartitionStore(data_dir / f"control-{p}.db", shared_memory=False)

    consumer = AIOKafkaConsumer(**client_args(settings), group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        stores = {p: open_store(p) for p in range(settings.publish_partitions)}
        progress_ = RestoreProgress()
        cpu_before, started = time.process_time(), time.monotonic()
        stores = await restore(
            consumer, topics.changelog_topic(settings, topics.CONTROL_CHANGELOG), stores, open_store, progress_
        )
        seconds, cpu = time.monotonic() - started, time.process_time() - cpu_before
        keys = sum(1 for store in stores.values() for _ in store.items())
        for store in stores.values():
            store.close()
    finally:
        await consumer.stop()
    return {"seconds": seconds, "cpu_s": cpu, "records": progress_.records_done, "keys_stored": keys}


def render_recovery(fig: dict[str, Any]) -> list[str]:
    rec = fig["rebuilt"]["recovery"]
    bulk = fig.get("bulk")
    bulk_lines = []
    if bulk:
        per = fig["bulk_seconds_per_100k_keys"]
        bulk_lines = [
            f"bulk restore (the batch stages' recovery) of the same changelog: {bulk['records']:,} records, "
            f"{bulk['keys_stored']:,} keys in {bulk['seconds']:.2f} s, CPU {bulk['cpu_s']:.2f} s "
            f"({1e6 * bulk['cpu_s'] / max(bulk['records'], 1):.1f} us a record)",
            f"bulk restore seconds per 100,000 keys = {per:.2f} (target <= {TARGET_S:g} s: "
            f"{'met' if per <= TARGET_S else 'NOT met'})",
        ]
    return [
        f"worker start, data directory intact (baseline): ready after {fig['baseline']['ready_seconds']:.1f} s",
        f"worker start, data directory wiped: ready after {fig['rebuilt']['ready_seconds']:.1f} s; "
        f"recovery read {rec['records_done']:,} changelog records in {rec['partitions_total']} partitions "
        f"in {rec['seconds']:.1f} s",
        f"recovery seconds per 100,000 keys = {fig['recovery_seconds_per_100k_keys']:.1f} "
        f"(target <= {TARGET_S:g} s: {'met' if fig['recovery_seconds_per_100k_keys'] <= TARGET_S else 'NOT met'}) "
        f"(time to ready over the baseline: {fig['ready_seconds_over_baseline_per_100k_keys']:.1f} s per 100,000 keys)",
        *_cpu_lines(fig),
        *bulk_lines,
        f"note: {fig['keys']:,} keys of control state over {fig['partitions']} partitions, one worker, "
        "broker on the same cores",
    ]


def _cpu_lines(fig: dict[str, Any]) -> list[str]:
    """CPU seconds from the worker's start until ready, each start (older results have none)."""
    lines = []
    for name in ("baseline", "rebuilt"):
        cpu = fig[name].get("cpu_s")
        if cpu:
            lines.append(
                f"CPU from start to ready, {name}: worker {cpu['worker']:.1f} s, broker {cpu['broker']:.1f} s "
                f"(over {fig[name]['ready_seconds']:.1f} s)"
            )
    return lines
