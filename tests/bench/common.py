"""What the control-agent bench sections share: the progress line, the METRIC profile, publishes
written to the publish topic as the API writes them, and a run of ``tests/bench/control_worker.py``
to the end."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psutil
from aiokafka import AIOKafkaProducer

from app.domain.events.publish import PublishRequest, publish_record, state_key
from app.domain.shared.ids import new_id
from app.kafka import records
from app.kafka.topics import PUBLISH
from app.settings import Settings
from tests.support.stack import ROOT, Stack
from tests.support.workflows import setup_topic

PROFILE: dict[str, Any] = {
    "type": "METRIC",
    "rules": [{"metric_name": "level", "mode": "ABSOLUTE", "threshold": 10}],
    "exit_stable_limit": 3,
}


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def stack_settings(stack: Stack) -> Settings:
    """The settings the stack's processes run with (its TOCSIN_* environment)."""
    return Settings(**{k[7:].lower(): v for k, v in stack.env.items() if k.startswith("TOCSIN_")})


def api_with_topic(stack: Stack, key: str, profile: dict[str, Any]) -> tuple[str, Settings]:
    """Bootstraps the stack, starts its API and sets up topic ``key`` (tests/support/workflows.py:
    ``setup_topic``): the topic's id and the stack's settings."""
    stack.bootstrap()
    stack.start_api()
    with stack.client() as client:
        topic_id = setup_topic(client, key, profile)["topic"]
    return topic_id, stack_settings(stack)


def cpu_seconds(pid: int | None) -> float:
    """CPU seconds (user and system, every thread) process ``pid`` used so far; 0 without one."""
    if pid is None:
        return 0.0
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def run_control_worker(
    argv: list[str], env: dict[str, str], log: Path, timeout: float, what: str
) -> tuple[list[str], int]:
    """Runs ``argv`` (a ``tests.bench.control_worker`` command) with its stderr in ``log`` until it
    exits; returns its stdout's lines then the log's (Faust routes a worker's stdout into its log,
    so a result line may be in either) and its exit code. Killed after ``timeout`` seconds."""
    with open(log, "wb") as err:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise RuntimeError(f"the {what} did not finish: {Stack.tail(log)}") from None
    return [*out.decode().splitlines(), *log.read_text(errors="replace").splitlines()], proc.returncode


async def write_publishes(
    settings: Settings, org_id: str, topic_id: str, publishes: Iterable[tuple[str, dict[str, Any]]]
) -> None:
    """Each ``(partition key, publish body)`` of ACTUAL status written to the publish topic as the
    API writes it (the body parsed from JSON, as the API parses it; accepted a millisecond apart)."""
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all", linger_ms=20)
    await producer.start()
    try:
        now = int(time.time() * 1000)
        pending = []
        for i, (key, body) in enumerate(publishes):
            request = PublishRequest.model_validate_json(json.dumps(body))
            value = publish_record(
                event_id=new_id("evt"), org_id=org_id, topic_id=topic_id, request=request, accepted_ms=now + i
            )
            sk = state_key(org_id, topic_id, "ACTUAL", key).encode()
            pending.append(await producer.send(settings.topic(PUBLISH), records.encode(value), key=sk))
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
