"""Bench section ``webhook_client``: the outbound client alone, every client in the same run.

Each client posts the same Standard-Webhooks-signed bodies to the same loopback receiver (its own
process, tests/bench/webhook_load.py ``receive``): first paced at ``RATE``/s for ``SECONDS`` with at
most ``CONCURRENCY`` in flight (as the webhook deliverer sends), timing each POST, then as fast as
``CONCURRENCY`` senders go for ``SATURATE_SECONDS`` (throughput). Clients alternate over ``ROUNDS``
rounds so that drift in the shared machine's load falls on all of them. The client's share of
the publish → delivered target (p50 ≤ 100 ms, p99 ≤ 250 ms at 500/s) must be tiny.
"""

from __future__ import annotations

import asyncio
import json
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.domain.delivery.webhooks import webhook_headers
from app.net.client import HttpClient
from app.net.errors import FetchRefused
from app.net.transport import Transport
from tests.support.stack import ROOT, wait_for

RATE, SECONDS, SATURATE_SECONDS, CONCURRENCY, ROUNDS = 500, 4, 2, 64, 3
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
TARGET_P50_S, TARGET_P99_S = 0.100, 0.250


def _clients() -> dict[str, Callable[[], Transport]]:
    """Every client to compare; one since the switch (the A/B against the hand-written poster it
    replaced is in the history of this file, its figures in the switch's commit)."""
    return {"aiohttp": lambda: HttpClient(allow_private_networks=True, connect_timeout=5, read_timeout=15)}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _signed(i: int) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"event_id": f"evt{i}", "status": "ACTUAL", "data": {"n": i}}).encode()
    headers = webhook_headers(SECRET, f"eff{i}", int(time.time()), body, "ACTUAL")
    return body, {"content-type": "application/json", **headers}


async def _paced(client: Transport, url: str) -> tuple[list[float], int]:
    latencies: list[float] = []
    errors = 0
    slots = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        nonlocal errors
        async with slots:
            body, headers = _signed(i)
            started = time.perf_counter()
            try:
                result = await client.post(url, body, headers)
            except FetchRefused:
                errors += 1
                return
            latencies.append(time.perf_counter() - started)
            errors += result.status != 204

    tasks = []
    start = time.perf_counter()
    for i in range(RATE * SECONDS):
        delay = start + i / RATE - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i)))
    await asyncio.gather(*tasks)
    return latencies, errors


async def _saturated(client: Transport, url: str) -> float:
    done = 0
    stop = time.perf_counter() + SATURATE_SECONDS

    async def sender(k: int) -> None:
        nonlocal done
        i = k
        while time.perf_counter() < stop:
            body, headers = _signed(i)
            await client.post(url, body, headers)
            done += 1
            i += CONCURRENCY

    started = time.perf_counter()
    await asyncio.gather(*(sender(k) for k in range(CONCURRENCY)))
    return done / (time.perf_counter() - started)


async def _measure(url: str) -> dict[str, dict[str, Any]]:
    runs: dict[str, dict[str, Any]] = {name: {"latencies": [], "errors": 0, "throughput": []} for name in _clients()}
    for _ in range(ROUNDS):
        for name, make in _clients().items():
            client = make()
            try:
                await client.post(url, *_signed(-1))  # warm: one connection made
                latencies, errors = await _paced(client, url)
                runs[name]["latencies"] += latencies
                runs[name]["errors"] += errors
                runs[name]["throughput"].append(await _saturated(client, url))
            finally:
                await client.aclose()
    return {
        name: {
            "requests": len(run["latencies"]),
            "errors": run["errors"],
            "p50_s": statistics.median(run["latencies"]),
            "p99_s": _pct(run["latencies"], 0.99),
            "throughput_per_s": statistics.median(run["throughput"]),
        }
        for name, run in runs.items()
    }


def run_webhook_client_section(work_dir: Any) -> dict[str, Any]:
    out = Path(work_dir) / "webhook-client"
    out.mkdir(parents=True, exist_ok=True)
    receiver = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.webhook_load", "receive", str(out / "port"), str(out / "arrived")],
        cwd=ROOT,
    )
    try:
        port = int(
            wait_for(lambda: ((out / "port").exists() and (out / "port").read_text()) or None, 30, "the receiver")
        )
        clients = asyncio.run(_measure(f"http://127.0.0.1:{port}/hook"))
    finally:
        receiver.send_signal(signal.SIGTERM)
        receiver.wait(timeout=30)
    figures: dict[str, Any] = {
        "rate": RATE,
        "seconds": SECONDS * ROUNDS,
        "concurrency": CONCURRENCY,
        "clients": clients,
        "target_p50_s": TARGET_P50_S,
        "target_p99_s": TARGET_P99_S,
    }
    if "hand-written" in clients:
        old, new = clients["hand-written"], clients["aiohttp"]
        figures["ratio_aiohttp_over_hand_written"] = {
            "p50": new["p50_s"] / old["p50_s"],
            "p99": new["p99_s"] / old["p99_s"],
            "throughput": new["throughput_per_s"] / old["throughput_per_s"],
        }
    return figures


def render_webhook_client(fig: dict[str, Any]) -> list[str]:
    lines = [
        f"one signed webhook POST to a loopback receiver, {fig['rate']}/s for {fig['seconds']} s "
        f"(≤ {fig['concurrency']} in flight), then saturated with {fig['concurrency']} senders:"
    ]
    for name, c in fig["clients"].items():
        lines.append(
            f"   {name:>12}: p50 {c['p50_s'] * 1000:.2f} ms, p99 {c['p99_s'] * 1000:.2f} ms, "
            f"{c['throughput_per_s']:.0f} requests/s saturated; {c['requests']} timed, {c['errors']} errors"
        )
    if ratio := fig.get("ratio_aiohttp_over_hand_written"):
        lines.append(
            f"   aiohttp / hand-written: p50 {ratio['p50']:.2f}, p99 {ratio['p99']:.2f}, "
            f"throughput {ratio['throughput']:.2f}"
        )
    lines.append(
        f"   the whole publish → delivered target is p50 ≤ {fig['target_p50_s'] * 1000:.0f} ms, "
        f"p99 ≤ {fig['target_p99_s'] * 1000:.0f} ms: the client's share is the p50/p99 above"
    )
    return lines
