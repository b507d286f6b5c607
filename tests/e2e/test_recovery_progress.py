"""A worker rebuilding its tables from the changelog shows how far it is: ``/readyz`` answers 503
with the progress (records and partitions done of the total, an estimate of the time left) and
the log has periodic INFO lines, then one with the final figures, which match the changelog."""

from __future__ import annotations

import asyncio
import re
import shutil
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer

from app.domain.events.control import ControlState
from app.domain.events.publish import state_key
from app.domain.pipeline import StoredControl
from app.kafka.topics import CONTROL_CHANGELOG
from app.settings import Settings
from tables.codecs import dump_control
from tests.support.stack import Stack, wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

PARTITIONS = 12
TABLES = 2  # control states (the control stage's stores) and idempotency keys (a Faust table): both read back
STATES = 150_000  # enough for a recovery of several seconds on a loaded machine (about 30,000 records/s)
_PROGRESS = re.compile(
    r"recovering from the changelogs: ([\d,]+) of ([\d,]+) records, (\d+) of (\d+) partitions done, "
    r"\d+ s so far, time left (?:about \d+ s|unknown yet)"
)
_FINAL = re.compile(r"recovered ([\d,]+) changelog records in (\d+) partitions in [\d.]+ s")


async def _fill_changelog(settings: Settings, org_id: str, count: int) -> None:
    """``count`` control states of distinct keys straight into the control changelog, as the
    worker writes them (key: the publish key; value: tables.codecs), spread over its partitions."""
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all", linger_ms=50)
    await producer.start()
    try:
        topic = settings.topic(f"{settings.worker_id}.{CONTROL_CHANGELOG}")
        state = dump_control(
            StoredControl(ControlState(policy_type="METRIC", last_values=(("level", 1.0),), last_decision="SUPPRESS"))
        )
        pending = []
        for i in range(count):
            key = state_key(org_id, "wtp_recovery", "ACTUAL", f"station-{i:06d}").encode()
            pending.append(await producer.send(topic, state, key=key, partition=i % settings.publish_partitions))
        await asyncio.gather(*pending)
    finally:
        await producer.stop()


def test_recovery_progress_in_readyz_and_log(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory(partitions=PARTITIONS, extra_env={"TOCSIN_WORKER_RECOVERY_LOG_SECONDS": "0.5"}).start()
    stack.stop_worker()  # the first start created the changelogs, empty
    env = stack.env
    settings = Settings(**{k[7:].lower(): v for k, v in env.items() if k.startswith("TOCSIN_")})
    asyncio.run(_fill_changelog(settings, stack.org, STATES))
    shutil.rmtree(stack.worker_data_dir())  # a lost disk: every state comes back from the changelog

    stack.start_worker()
    url = stack.worker_urls[-1]
    seen: list[dict[str, Any]] = []

    def ready() -> dict[str, Any] | None:
        try:
            answer = httpx.get(f"{url}/readyz", timeout=5)
        except httpx.HTTPError:
            return None  # not listening yet
        body: dict[str, Any] = answer.json()
        seen.append(body)
        return body if answer.status_code == 200 else None

    started = time.monotonic()
    final = wait_for(ready, 300, "the worker to rebuild its tables and be ready", 0.1)
    took = time.monotonic() - started

    recovering = [b["recovery"] for b in seen if b["status"] == "not ready" and "recovery" in b]
    partial = [r for r in recovering if r["state"] == "recovering" and 0 < r["records_done"] < r["records_total"]]
    assert partial, f"no /readyz answer showed a recovery under way in {took:.1f} s: {seen[-5:]}"
    assert all(r["records_total"] == STATES for r in recovering if r["state"] == "recovering"), recovering[:3]
    assert all(r["partitions_total"] == PARTITIONS * TABLES for r in recovering), recovering[:3]
    assert any(r["remaining_seconds"] is not None and r["remaining_seconds"] > 0 for r in partial), partial[:3]
    done = [r["records_done"] for r in recovering if r["state"] == "recovering"]
    assert done == sorted(done), "records done went backwards"
    assert final["recovery"] == {
        **final["recovery"],
        "state": "done",
        "records_done": STATES,
        "records_total": STATES,
        "partitions_done": PARTITIONS * TABLES,
        "partitions_total": PARTITIONS * TABLES,
        "remaining_seconds": 0.0,
    }

    log = stack.worker_logs[-1].read_text(errors="replace")
    # the control stage's restore (tables/changelog_restore.py) logs its own lines, the idempotency
    # table's recovery (Faust's) its own: every control state is in the first, none in the second
    progress = [tuple(int(g.replace(",", "")) for g in m.groups()) for m in _PROGRESS.finditer(log)]
    assert progress, f"no progress line in the worker's log:\n{stack.tail(stack.worker_logs[-1])}"
    assert all(total == STATES and parts == PARTITIONS for _d, total, _p, parts in progress), progress
    assert all(d < total for d, total, _p, _parts in progress)
    # periodic, not a flood: about one line per interval of the recovery
    assert len(progress) <= final["recovery"]["seconds"] / 0.5 + 2, len(progress)
    finals = [(int(n.replace(",", "")), int(p)) for n, p in _FINAL.findall(log)]
    assert [f for f in finals if f[0]] == [(STATES, PARTITIONS)], finals
    print(
        f"\nrecovery of {STATES} records: ready after {took:.1f} s; {len(recovering)} answers while not ready, "
        f"{len(partial)} under way; {len(progress)} progress lines; final {final['recovery']}"
    )
