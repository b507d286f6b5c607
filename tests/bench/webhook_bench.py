"""Bench section ``webhook``: publish → webhook delivered latency at a steady rate.

A BYPASS topic with one SEND_WEBHOOK workflow; a receiver on loopback notes when each event's
webhook arrives; a publisher sends ``RATE`` publishes/s spread over ``KEYS`` partition keys for
``SECONDS`` (each publish timed from just before its request). Both run in processes of their
own (tests/bench/webhook_load.py). The baseline, measured in the same run, is one bare HTTP POST
to the same receiver.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.stack import ROOT, Stack, wait_for

RATE, KEYS, SECONDS = 500, 50, 20
TARGET_P99_S = 1.0
EXTRA_ENV = dict(e.split("=", 1) for e in os.environ.get("TOCSIN_BENCH_WORKER_ENV", "").split(",") if e)


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _baseline(port: int) -> list[float]:
    out = []
    async with httpx.AsyncClient() as client:
        for i in range(300):
            started = time.perf_counter()
            await client.post(f"http://127.0.0.1:{port}/", json={"event_id": f"base{i}"})
            out.append(time.perf_counter() - started)
    return out


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "tests.bench.webhook_load", *args], cwd=ROOT)


def _lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()]


def run_webhook_section(kafka_bootstrap: str, work_dir: Any) -> dict[str, Any]:
    out = Path(work_dir) / "webhook-load"
    out.mkdir(parents=True, exist_ok=True)
    receiver = _spawn("receive", str(out / "port"), str(out / "arrived"))
    stack = Stack(
        work_dir / "webhook", kafka_bootstrap, extra_env={"TOCSIN_ALLOW_PRIVATE_NETWORKS": "true", **EXTRA_ENV}
    )
    try:
        port = int(
            wait_for(lambda: ((out / "port").exists() and (out / "port").read_text()) or None, 30, "the receiver")
        )
        stack.start()
        with stack.client() as c:
            assert c.post("/workflow_topics", json={"key": "hooks"}).status_code == 201
            r = c.post(
                "/workflows",
                json={
                    "name": "bench hook",
                    "topic": "hooks",
                    "mode": "ACTUAL",
                    "actions": [{"type": "SEND_WEBHOOK", "url": f"http://127.0.0.1:{port}/hook"}],
                },
            )
            assert r.status_code == 201, r.text
            # Warm-up: one delivered webhook shows the worker consumes (partitions assigned, caches
            # loaded); the measured load starts after it, so it measures the steady state.
            warm = c.post("/workflow_topics/hooks/publish", json={"status": "ACTUAL", "data": {}})
            assert warm.status_code == 202, warm.text
            wait_for(lambda: _delivered_count(stack) >= 1 or None, 120, "the warm-up webhook")
        baseline = asyncio.run(_baseline(port))
        _progress(f"webhook: {RATE} publishes/s over {KEYS} partition keys for {SECONDS} s")
        url = f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/hooks/publish"
        publisher = _spawn(
            "publish", url, stack.credentials["access_token"], str(RATE), str(SECONDS), str(KEYS), str(out / "sent")
        )
        publisher.wait(timeout=SECONDS + 120)
        head, *rows = _lines(out / "sent")
        summary = json.loads(" ".join(head))
        sent = {event_id: float(at) for event_id, at in rows}
        # Wait until every accepted publish was delivered (or a minute passed), then stop the receiver.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _delivered_count(stack) < len(sent) + 1:
            time.sleep(0.5)
    finally:
        stack.stop()
        receiver.send_signal(signal.SIGTERM)
        receiver.wait(timeout=30)
    arrived = {event_id: float(at) for event_id, at in _lines(out / "arrived")}
    latencies = [arrived[e] - t for e, t in sent.items() if e in arrived]
    missing = len(sent) - len(latencies)
    p99 = _pct(latencies, 0.99) if latencies else float("inf")
    return {
        "rate": RATE,
        "keys": KEYS,
        "seconds": SECONDS,
        "accepted": len(sent),
        "refused": summary["refused"],
        "publisher_behind_s": summary["behind_s"],
        "delivered": len(latencies),
        "missing": missing,
        "p50_s": statistics.median(latencies) if latencies else None,
        "p99_s": p99,
        "max_s": max(latencies) if latencies else None,
        "baseline_p50_s": statistics.median(baseline),
        "baseline_p99_s": _pct(baseline, 0.99),
        "target_p99_s": TARGET_P99_S,
        "met": missing == 0 and summary["refused"] == 0 and p99 <= TARGET_P99_S,
    }


def _delivered_count(stack: Stack) -> int:
    """Delivered webhooks as the worker recorded them (the deliveries table)."""
    import sqlite3

    with sqlite3.connect(stack.var_dir / "tocsin.db") as db:
        row = db.execute("select count(*) from deliveries where status = 'DELIVERED'").fetchone()
    return int(row[0])


def render_webhook(fig: dict[str, Any]) -> list[str]:
    ms = 1000
    return [
        f"publish → webhook delivered: p50 {fig['p50_s'] * ms:.0f} ms, p99 {fig['p99_s'] * ms:.0f} ms, "
        f"max {fig['max_s'] * ms:.0f} ms (target p99 ≤ {fig['target_p99_s'] * ms:.0f} ms): "
        + ("met" if fig["met"] else "NOT MET"),
        f"   {fig['accepted']} accepted at {fig['rate']}/s over {fig['keys']} keys for {fig['seconds']} s "
        f"(publisher {fig['publisher_behind_s']:.2f} s behind schedule at the end), "
        f"{fig['delivered']} delivered, {fig['missing']} missing, {fig['refused']} refused",
        f"   baseline, one bare POST to the same receiver: p50 {fig['baseline_p50_s'] * ms:.2f} ms, "
        f"p99 {fig['baseline_p99_s'] * ms:.2f} ms; ratio p99/baseline p99 = "
        f"{fig['p99_s'] / fig['baseline_p99_s']:.0f}",
    ]
