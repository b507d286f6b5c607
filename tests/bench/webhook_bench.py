"""Bench section ``webhook``: publish → webhook delivered latency at a steady rate.

A BYPASS topic with one SEND_WEBHOOK workflow; a receiver on loopback (an asyncio HTTP server in
this process) notes when each event's webhook arrives; the publisher sends ``RATE`` publishes/s
spread over ``KEYS`` partition keys for ``SECONDS`` (each publish timed from just before its
request). The baseline, measured in the same run, is one bare HTTP POST to the same receiver.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import threading
import time
from typing import Any

import httpx

from tests.support.stack import Stack

RATE, KEYS, SECONDS = 500, 50, 20
TARGET_P99_S = 1.0


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


class Receiver:
    """A minimal HTTP/1.1 server: answers 204 and notes the arrival time of each event id."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()
        server.close()
        self.loop.run_until_complete(server.wait_closed())

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length) if length else b""
                now = time.perf_counter()
                if body:
                    event_id = json.loads(body).get("event_id")
                    if event_id:
                        self.arrived.setdefault(event_id, now)
                writer.write(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed its connection: nothing more to serve on it
        finally:
            writer.close()

    def start(self) -> None:
        self.thread.start()
        self.ready.wait(10)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _publish(stack: Stack, topic: str, sent: dict[str, float]) -> int:
    refused = 0
    headers = {"Authorization": f"Bearer {stack.credentials['access_token']}"}
    url = f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/{topic}/publish"
    async with httpx.AsyncClient(headers=headers, timeout=10, limits=httpx.Limits(max_connections=64)) as client:

        async def one(i: int) -> None:
            nonlocal refused
            body = {"status": "ACTUAL", "data": {"n": i}, "event_control": {"partition_key": f"k{i % KEYS}"}}
            started = time.perf_counter()
            r = await client.post(url, json=body)
            if r.status_code == 202:
                sent[r.json()["id"]] = started
            else:
                refused += 1

        tasks = []
        start = time.perf_counter()
        for i in range(RATE * SECONDS):
            due = start + i / RATE
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i)))
        await asyncio.gather(*tasks)
    return refused


async def _baseline(port: int) -> list[float]:
    out = []
    async with httpx.AsyncClient() as client:
        for i in range(300):
            started = time.perf_counter()
            await client.post(f"http://127.0.0.1:{port}/", json={"event_id": f"base{i}"})
            out.append(time.perf_counter() - started)
    return out


def run_webhook_section(kafka_bootstrap: str, work_dir: Any) -> dict[str, Any]:
    receiver = Receiver()
    receiver.start()
    stack = Stack(work_dir / "webhook", kafka_bootstrap, extra_env={"TOCSIN_ALLOW_PRIVATE_NETWORKS": "true"})
    try:
        stack.start()
        with stack.client() as c:
            assert c.post("/workflow_topics", json={"key": "hooks"}).status_code == 201
            r = c.post(
                "/workflows",
                json={
                    "name": "bench hook",
                    "topic": "hooks",
                    "mode": "ACTUAL",
                    "actions": [{"type": "SEND_WEBHOOK", "url": f"http://127.0.0.1:{receiver.port}/hook"}],
                },
            )
            assert r.status_code == 201, r.text
        baseline = asyncio.run(_baseline(receiver.port))
        _progress(f"webhook: {RATE} publishes/s over {KEYS} partition keys for {SECONDS} s")
        sent: dict[str, float] = {}
        refused = asyncio.run(_publish(stack, "hooks", sent))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not set(sent) <= set(receiver.arrived):
            time.sleep(0.2)
        latencies = [receiver.arrived[e] - t for e, t in sent.items() if e in receiver.arrived]
    finally:
        stack.stop()
        receiver.stop()
    missing = len(sent) - len(latencies)
    p99 = _pct(latencies, 0.99) if latencies else float("inf")
    return {
        "rate": RATE,
        "keys": KEYS,
        "seconds": SECONDS,
        "accepted": len(sent),
        "refused": refused,
        "delivered": len(latencies),
        "missing": missing,
        "p50_s": statistics.median(latencies) if latencies else None,
        "p99_s": p99,
        "max_s": max(latencies) if latencies else None,
        "baseline_p50_s": statistics.median(baseline),
        "baseline_p99_s": _pct(baseline, 0.99),
        "target_p99_s": TARGET_P99_S,
        "met": missing == 0 and refused == 0 and p99 <= TARGET_P99_S,
    }


def render_webhook(fig: dict[str, Any]) -> list[str]:
    ms = 1000
    return [
        f"publish → webhook delivered: p50 {fig['p50_s'] * ms:.0f} ms, p99 {fig['p99_s'] * ms:.0f} ms, "
        f"max {fig['max_s'] * ms:.0f} ms (target p99 ≤ {fig['target_p99_s'] * ms:.0f} ms): "
        + ("met" if fig["met"] else "NOT MET"),
        f"   {fig['accepted']} accepted at {fig['rate']}/s over {fig['keys']} keys for {fig['seconds']} s, "
        f"{fig['delivered']} delivered, {fig['missing']} missing, {fig['refused']} refused",
        f"   baseline, one bare POST to the same receiver: p50 {fig['baseline_p50_s'] * ms:.2f} ms, "
        f"p99 {fig['baseline_p99_s'] * ms:.2f} ms; ratio p99/baseline p99 = "
        f"{fig['p99_s'] / fig['baseline_p99_s']:.0f}",
    ]
