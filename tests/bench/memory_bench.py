"""Bench section ``memory``: the worker's resident memory as it meets 1,000,000 new partition keys
(issue 18: at most 300 MB of growth per million; before the bounds, +77 MB per 50,000 keys).

The publish topic is filled beforehand with one METRIC record for each of WARMUP + KEYS distinct
partition keys (each opens an episode with an auto-resolve time, so every key gets a state, a
due time and an incident action), produced straight to the topic with aiokafka as the API would
write them. The real control agent then processes every record (tests/bench/control_worker.py,
mode ``control``: tables in RocksDB, changelogs, the due index's timer, outputs to Kafka; the
sinks do not run) and reports its own RSS every STEP records. Growth is measured from the end of
the warm-up (the worker's one-off costs: database engine, topic config, RocksDB partitions
opened) to the last record, and scaled to 1,000,000 keys.

Baseline in the same run: the same worker over the first BASELINE_KEYS records of the same topic
with the bounds lifted to what they were before (every state and due time kept, Faust's RocksDB
memory: 2 GiB of block cache and 3 x 64 MiB of memtables per partition), scaled the same way.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from typing import Any

from aiokafka import AIOKafkaProducer

from app.domain.events.publish import PublishRequest, publish_record, state_key
from app.domain.shared.ids import new_id
from app.kafka import records
from app.kafka.topics import PUBLISH
from app.settings import Settings
from tests.bench import common
from tests.bench.common import api_with_topic, progress, run_control_worker
from tests.support.stack import Stack

KEYS = int(os.environ.get("TOCSIN_BENCH_MEMORY_KEYS", "1000000"))
WARMUP = 20_000
STEP = 100_000
TARGET_MB = 300.0
PROFILE = {
    **common.PROFILE,
    "auto_resolve_duration": 600,  # minutes: every state gets a due time, none comes during the run
}
MB = 1024 * 1024
BASELINE_KEYS = int(os.environ.get("TOCSIN_BENCH_MEMORY_BASELINE_KEYS", "200000"))
UNBOUNDED = {
    "TOCSIN_CONTROL_STATE_CACHE_SIZE": "10000000",
    "TOCSIN_CONTROL_DUE_WINDOW_SIZE": "10000000",
    "TOCSIN_ROCKSDB_BLOCK_CACHE_MB": "8192",
    "TOCSIN_ROCKSDB_WRITE_BUFFER_MB": "768",
}


async def _fill(settings: Settings, org_id: str, topic_id: str, total: int) -> None:
    """One record per partition key, as the API writes a publish (the model validated once, the
    event id, key and acceptance time set per record)."""
    request = PublishRequest.model_validate_json(  # from JSON, as the API parses a publish
        json.dumps(
            {
                "status": "ACTUAL",
                "data": {"level": 12.5},
                "event": {"name": "station level"},
                "event_control": {"partition_key": "station", "metrics": {"level": 12.5}},
            }
        )
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap, acks="all", linger_ms=50, max_batch_size=256 * 1024
    )
    await producer.start()
    try:
        topic, now = settings.topic(PUBLISH), int(time.time() * 1000)
        template = publish_record(event_id="evt", org_id=org_id, topic_id=topic_id, request=request, accepted_ms=now)
        pending: list[Any] = []
        for i in range(total):
            key = f"station-{i:07d}"
            value = {
                **template,
                "id": new_id("evt"),
                "accepted_ms": now + i // 1000,
                "event_control": {**template["event_control"], "partition_key": key},
            }
            sk = state_key(org_id, topic_id, "ACTUAL", key).encode()
            pending.append(await producer.send(topic, records.encode(value), key=sk))
            if len(pending) >= 20_000:
                await asyncio.gather(*pending)
                pending.clear()
                if (i + 1) % 200_000 == 0:
                    progress(f"memory: {i + 1:,} records produced")
        await asyncio.gather(*pending)
    finally:
        await producer.stop()


def _run_worker(
    stack: Stack, total: int, extra_env: dict[str, str] | None = None
) -> tuple[list[dict[str, int]], dict[str, Any]]:
    tag = uuid.uuid4().hex[:8]
    env = {
        **stack.env,
        **(extra_env or {}),
        "TOCSIN_WORKER_ID": f"bench-memory-{tag}",
        "TOCSIN_WORKER_DATA_DIR": str(stack.var_dir / f"bench-memory-{tag}"),
        "TOCSIN_DECISION_LOG": "false",
        "TOCSIN_BENCH_WARMUP": str(WARMUP),
        "TOCSIN_BENCH_RSS_EVERY": str(STEP),
    }
    log = stack.var_dir / f"bench-memory-{tag}.log"
    progress(f"memory: the control agent over {total:,} records{' (bounds lifted)' if extra_env else ''}")
    argv = [sys.executable, "-m", "tests.bench.control_worker", "control", str(total)]
    lines, returncode = run_control_worker(argv, env, log, 3000, "control agent")
    samples: list[dict[str, int]] = []
    result: dict[str, Any] | None = None
    for line in lines:
        if "CONTROL_BENCH_RSS " in line:
            samples.append(json.loads(line.split("CONTROL_BENCH_RSS ", 1)[1]))
        elif "CONTROL_BENCH " in line:
            result = json.loads(line.split("CONTROL_BENCH ", 1)[1])
    if result is None:
        raise RuntimeError(f"the control agent printed no result (exit {returncode}): {Stack.tail(log)}")
    unique = {s["processed"]: s for s in samples}  # the stdout and the log may both hold a line
    return sorted(unique.values(), key=lambda s: s["processed"]), result


def run_memory_section(kafka_bootstrap: str, work_dir: Any) -> dict[str, Any]:
    stack = Stack(work_dir / "memory", kafka_bootstrap)
    total = WARMUP + KEYS
    try:
        topic_id, settings = api_with_topic(stack, "stations", PROFILE)
        progress(f"memory: filling the publish topic with {total:,} records, one per partition key")
        started = time.perf_counter()
        asyncio.run(_fill(settings, stack.org, topic_id, total))
        fill_seconds = time.perf_counter() - started
        stack.stop()  # the API is not needed while the agent runs
        baseline = _growth(*_run_worker(stack, WARMUP + BASELINE_KEYS, UNBOUNDED)) if BASELINE_KEYS else None
        samples, result = _run_worker(stack, total)
    finally:
        stack.stop()
    first = samples[0]  # at the end of the warm-up
    last = samples[-1]
    keys = last["processed"] - first["processed"]
    growth = (last["rss_bytes"] - first["rss_bytes"]) / MB
    per_million = growth * 1_000_000 / keys if keys else float("nan")
    half = min(samples, key=lambda s: abs(s["processed"] - (first["processed"] + keys // 2)))
    half_keys = max(1, last["processed"] - half["processed"])
    second_half = (last["rss_bytes"] - half["rss_bytes"]) / MB * 1_000_000 / half_keys
    return {
        "keys": KEYS,
        "records": total,
        "fill_seconds": fill_seconds,
        "rate": result["rate"],
        "decisions": {k: v for k, v in result.items() if k in ("NOTIFY", "SUPPRESS", "RESOLVE")},
        "samples": samples,
        "before": first,
        "after": last,
        "growth_mb": growth,
        "growth_mb_per_million": per_million,
        "second_half_mb_per_million": second_half,
        "target_mb": TARGET_MB,
        "met": per_million <= TARGET_MB,
        "baseline": baseline,
    }


def _growth(samples: list[dict[str, int]], result: dict[str, Any]) -> dict[str, Any]:
    first, last = samples[0], samples[-1]
    keys = max(1, last["processed"] - first["processed"])
    growth = (last["rss_bytes"] - first["rss_bytes"]) / MB
    return {
        "samples": samples,
        "rate": result["rate"],
        "growth_mb": growth,
        "growth_mb_per_million": growth * 1_000_000 / keys,
    }


def render_memory(fig: dict[str, Any]) -> list[str]:
    lines = [f"   {'records':>10} {'RSS MB':>8}"]
    lines += [f"   {s['processed']:>10,} {s['rss_bytes'] / MB:>8.1f}" for s in fig["samples"]]
    before, after = fig["before"], fig["after"]
    verdict = "target met" if fig["met"] else "ABOVE TARGET"
    lines.append(
        f"worker RSS {before['rss_bytes'] / MB:.0f} MB after {before['processed']:,} records, "
        f"{after['rss_bytes'] / MB:.0f} MB after {after['processed']:,}: "
        f"+{fig['growth_mb']:.0f} MB, {fig['growth_mb_per_million']:.0f} MB per 1,000,000 partition keys "
        f"(target ≤ {fig['target_mb']:.0f}; before the bounds ≈ 1,540): {verdict}"
    )
    lines.append(f"second half of the run: {fig['second_half_mb_per_million']:.0f} MB per 1,000,000 keys")
    base = fig.get("baseline")
    if base:
        b0, b1 = base["samples"][0], base["samples"][-1]
        lines.append(
            f"baseline, bounds lifted (same run, same topic): {b0['rss_bytes'] / MB:.0f} MB after "
            f"{b0['processed']:,} records, {b1['rss_bytes'] / MB:.0f} MB after {b1['processed']:,}: "
            f"{base['growth_mb_per_million']:.0f} MB per 1,000,000 keys; bounded / baseline = "
            f"{fig['growth_mb_per_million'] / base['growth_mb_per_million']:.2f}"
        )
    lines.append(
        f"note: {fig['records']:,} records, one per partition key, {fig['rate']:,.0f} records/s through the control "
        f"agent ({fig['decisions']}); produced in {fig['fill_seconds']:.0f} s; one worker, default bounds; "
        "the broker on the same cores"
    )
    return lines
