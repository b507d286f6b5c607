"""Batch publish end to end, with the worker: a batch's events are decided in order per partition
key, idempotency keys behave as in single publishes (within a batch and across a replayed batch),
and a refused batch (a bad request, or the broker away: 503) leaves nothing for the worker to decide."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from cli.events import cmd_events_show
from cli.profile import Target
from devstack.kafka import LocalKafka
from tests.support.scaling import CYCLE, METRIC_PROFILE, spec_decisions
from tests.support.stack import ROOT, Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def post_batch(
    client: httpx.Client, topic: str, items: list[dict[str, Any]], *, ndjson: bool = False
) -> httpx.Response:
    if ndjson:
        content = b"\n".join(orjson.dumps(i) for i in items)
        return client.post(
            f"/workflow_topics/{topic}/publish:batch", content=content, headers={"Content-Type": "application/x-ndjson"}
        )
    return client.post(f"/workflow_topics/{topic}/publish:batch", json=items)


def steps_of(client: httpx.Client, event_id: str, timeout: float = 90) -> dict[str, dict[str, Any]]:
    """The event's trace steps by name, once the worker has decided it (or dropped it as a duplicate)."""

    def ready() -> dict[str, dict[str, Any]] | None:
        r = client.get(f"/events/{event_id}")
        if r.status_code != 200:
            return None
        steps = {s["step"]: s for s in r.json()["steps"]}
        return steps if "control" in steps or steps.get("idempotency", {}).get("outcome") == "duplicate" else None

    return wait_for(ready, timeout, f"the trace of {event_id}")


def metric(key: str, level: float, **extra: Any) -> dict[str, Any]:
    return {
        "status": "ACTUAL",
        "data": {"level": level},
        "event": {"name": f"{key} alert"},
        "event_control": {"partition_key": key, "metrics": {"level": level}},
        **extra,
    }


def test_batch_events_are_decided_in_order_per_partition_key(stack_factory: Any) -> None:
    stack: Stack = stack_factory()
    stack.start()
    keys = [f"site-{i}" for i in range(3)]
    values = [*CYCLE, *CYCLE]  # two episodes per key: any reordering changes a decision
    items = [metric(key, value) for value in values for key in keys]  # the keys interleaved
    with stack.client() as client:
        setup_topic(client, "quake", METRIC_PROFILE)
        # sent as a person would: NDJSON on tocsin publish's stdin, streamed in batches of 5
        env = {
            **os.environ,
            "TOCSIN_URL": stack.base_url,
            "TOCSIN_TOKEN": stack.credentials["access_token"],
            "TOCSIN_ORG": stack.org,
            "TOCSIN_PROFILE_FILE": os.devnull,
        }
        ndjson = b"".join(orjson.dumps(item) + b"\n" for item in items)
        done = subprocess.run(
            [sys.executable, "-m", "cli", "publish", "quake", "-", "--batch-size", "5"],
            input=ndjson,
            capture_output=True,
            env=env,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()
        assert done.stderr.decode().splitlines()[-1] == f"published {len(items)} events"
        ids = done.stdout.decode().split()
        assert len(ids) == len(items)
        decided = [steps_of(client, event_id)["control"]["decision"] for event_id in ids]
        shown = io.StringIO()
        cmd_events_show(Target(stack.base_url, stack.credentials["access_token"], stack.org), ids[0], out=shown)
        assert shown.getvalue().startswith(f"event {ids[0]} accepted at ")
        [control] = [line for line in shown.getvalue().splitlines() if line.startswith("  control: ")]
        assert f"decision={decided[0]}" in control
    for n, key in enumerate(keys):
        assert decided[n :: len(keys)] == spec_decisions(values), key


def test_idempotency_keys_within_a_batch_and_across_a_replayed_batch(stack_factory: Any) -> None:
    stack: Stack = stack_factory()
    stack.start()
    tag = uuid.uuid4().hex[:6]
    idem = [{"attributes": {"idempotency_key": f"{tag}-{k}"}} for k in ("a", "b", "a")]
    items = [metric(f"k{i}", 20.0, **attributes) for i, attributes in enumerate(idem)]
    with stack.client() as client:
        setup_topic(client, "quake", METRIC_PROFILE)
        first = post_batch(client, "quake", items)
        assert first.status_code == 202, first.text
        a, b, a_again = first.json()["ids"]
        for event_id in (a, b):
            steps = steps_of(client, event_id)
            assert steps["control"]["decision"] == "NOTIFY"
            assert steps["idempotency"]["outcome"] == "first"
        duplicate = steps_of(client, a_again)
        assert "control" not in duplicate
        assert duplicate["idempotency"] == {
            "step": "idempotency",
            "key": f"{tag}-a",
            "outcome": "duplicate",
            "duplicate_of": a,
        }
        replay = post_batch(client, "quake", items)  # the producer retries the whole batch
        assert replay.status_code == 202, replay.text
        originals = {f"{tag}-a": a, f"{tag}-b": b}
        for event_id, attributes in zip(replay.json()["ids"], idem, strict=True):
            key = attributes["attributes"]["idempotency_key"]
            step = steps_of(client, event_id)["idempotency"]
            assert step == {"step": "idempotency", "key": key, "outcome": "duplicate", "duplicate_of": originals[key]}
        wait_for(lambda: len(all_incidents(client)) == 2, 60, "an incident for a and b")  # none for a repeat


def test_a_refused_batch_is_never_decided(stack_factory: Any) -> None:
    stack: Stack = stack_factory()
    stack.start()
    with stack.client() as client:
        setup_topic(client, "quake", METRIC_PROFILE)
        bad = [metric("refused-1", 20.0), {"status": "ACTUAL", "data": {}}, metric("refused-2", 20.0)]
        r = post_batch(client, "quake", bad)
        assert r.status_code == 422, r.text
        assert [e["index"] for e in r.json()["details"]["items"]] == [1]
        good = post_batch(client, "quake", [metric("accepted", 20.0)])
        assert good.status_code == 202, good.text
        assert steps_of(client, good.json()["ids"][0])["control"]["decision"] == "NOTIFY"
        incidents = wait_for(lambda: all_incidents(client) or None, 60, "the accepted event's incident")
        assert [i["partition_key"] for i in incidents] == ["accepted"]
        for key in ("refused-1", "refused-2"):
            state = client.get("/workflow_topics/quake/control_state", params={"partition_key": key})
            assert state.status_code in (200, 404), state.text
            assert state.status_code == 404 or state.json()["last_decision"] is None, state.text


def test_a_batch_refused_503_while_the_broker_is_paused_is_never_decided(tmp_path: Path) -> None:
    """With TOCSIN_PUBLISH_TRANSACTIONS off (single publishes outside transactions) the batch still
    goes in a transaction. A broker that stops answering (SIGSTOP) past the produce timeout: the
    batch is refused with 503;
    the broker keeps what it received in its socket buffer and stores it when it resumes, but the
    transaction is aborted, so none of the batch's events is ever decided."""
    broker = LocalKafka(tmp_path / "kafka")
    broker.start()
    # single publishes outside transactions, so what is tested is the batch's own transaction
    stack = Stack(tmp_path / "stack", broker.bootstrap, extra_env={"TOCSIN_PUBLISH_TRANSACTIONS": "false"})
    try:
        stack.start()
        with stack.client() as client:
            setup_topic(client, "quake", {"type": "BYPASS"})

            def batch(tag: str) -> list[dict[str, Any]]:
                return [{"status": "ACTUAL", "data": {}, "event": {"name": f"{tag}-{i}"}} for i in range(20)]

            assert post_batch(client, "quake", batch("before")).status_code == 202
            pid = broker.pid
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)
            try:
                refused = post_batch(client, "quake", batch("refused"))
                assert refused.status_code == 503, refused.text
                assert refused.json()["code"] == "SYS-001"
            finally:
                os.kill(pid, signal.SIGCONT)
            after = wait_for(
                lambda: r if (r := post_batch(client, "quake", batch("after"))).status_code == 202 else None,
                60,
                "a batch accepted once the broker is back",
            )
            assert len(after.json()["ids"]) == 20

            def titles() -> list[str]:
                return [i["title"] for i in all_incidents(client)]

            wait_for(lambda: len({t for t in titles() if not t.startswith("refused")}) >= 40, 120, "40 incidents")
            deadline = time.monotonic() + 10  # a stored record of the refused batch would be decided by now
            while time.monotonic() < deadline:
                assert not [t for t in titles() if t.startswith("refused")], "a refused batch was decided"
                time.sleep(1)
    finally:
        stack.stop()
        broker.stop()
