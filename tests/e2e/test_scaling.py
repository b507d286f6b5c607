"""Scaling out under load: one worker under a steady METRIC load, two more join, one of them is
killed with ``kill -9`` and restarted on its own data directory. Every accepted event is decided
as the spec's METRIC table says (every decision any worker made for it, redeliveries included),
every NOTIFY/RESOLVE reaches the webhook, and no worker saw a gap in any partition."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from app.domain.webhooks import new_secret
from tests.support.receiver import webhook_receiver
from tests.support.scaling import (
    METRIC_PROFILE,
    Churn,
    MetricLoad,
    assert_no_gaps,
    decision_lines,
    refetch_lines,
)
from tests.support.stack import Stack, wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

ENV = {
    "TOCSIN_ALLOW_PRIVATE_NETWORKS": "true",
    "TOCSIN_PUBLISH_RATE_PER_SECOND": "1000000",  # the limiter is not under test here
    "TOCSIN_PUBLISH_BURST": "1000000",
}


def _setup(stack: Stack, base: str) -> None:
    with stack.client() as client:
        topic = client.post(
            "/workflow_topics", json={"key": "levels", "name_en": "levels", "control_policy_profile": METRIC_PROFILE}
        )
        assert topic.status_code == 201, topic.text
        book = client.post("/operation_books", json={"name": "levels", "incident_title_template": "{event.name}"})
        assert book.status_code == 201, book.text
        workflow = client.post(
            "/workflows",
            json={
                "name": "levels",
                "topic": "levels",
                "mode": "ACTUAL",
                "actions": [
                    {"type": "RUN_OPERATION_BOOK", "operation_book_id": book.json()["id"]},
                    {"type": "SEND_WEBHOOK", "url": f"{base}/levels", "secret": new_secret()},
                ],
            },
        )
        assert workflow.status_code == 201, workflow.text


@pytest.mark.parametrize("run", [1, 2])
def test_scale_1_to_3_workers_with_kill_9_and_restart_under_load(
    stack_factory: Callable[..., Stack], worker_churn: Callable[..., Churn], tmp_path: Path, run: int
) -> None:
    started = time.monotonic()
    stack = stack_factory(partitions=4, extra_env=ENV).start()
    with webhook_receiver() as (got, base):
        _setup(stack, base)
        load = MetricLoad(stack, "levels", keys=40, per_key=1000, rate=100.0).start()
        wait_for(lambda: load.done() >= 200, 60, "200 publishes before the others join", 0.05)
        churn = worker_churn(stack, load.done)
        joined_at, killed_at, restarted_at = churn.joined, churn.killed, churn.restarted
        load.stop()
        total = load.done()
        assert joined_at < killed_at < restarted_at < total, "the churn did not happen while the load flowed"
        refused = Counter(p.status for p in load.sent if p.server_id is None)
        assert not refused, f"publishes not accepted on a healthy broker: {refused}"

        expected = load.expected()
        assert len(expected) == total

        def decided() -> dict[str, list[str]] | None:
            found = decision_lines(stack.worker_logs)
            return found if expected.keys() <= found.keys() else None

        try:
            decisions = wait_for(decided, 180, f"decisions of {len(expected)} accepted events", 1)
        except AssertionError:
            found = decision_lines(stack.worker_logs)
            missing = sorted(expected.keys() - found.keys())
            raise AssertionError(f"{len(missing)} accepted events never decided, e.g. {missing[:5]}") from None
        wanted_effects = {e for e, d in expected.items() if d != "SUPPRESS"}

        def delivered() -> set[str] | None:
            seen = {body["event_id"] for _p, _h, body in got.snapshot()}
            return seen if wanted_effects <= seen else None

        wait_for(delivered, 120, f"{len(wanted_effects)} webhook deliveries", 0.5)
        # late duplicates: keep listening a while after the set is complete
        time.sleep(5)  # a fixed listening window after completion, not a wait for a condition
        deliveries = got.snapshot()

    wrong = {e: (expected[e], d) for e, d in decisions.items() if e in expected and set(d) != {expected[e]}}
    unknown = set(decisions) - expected.keys()
    per_effect = Counter(h["webhook-id"] for _p, h, _b in deliveries)
    repeated_effects = {k: n for k, n in per_effect.items() if n > 1}
    per_event = Counter(b["event_id"] for _p, _h, b in deliveries)
    wrong_delivery = {
        b["event_id"]: b["decision"] for _p, _h, b in deliveries if b["decision"] != expected.get(b["event_id"])
    }
    decided_twice = sum(1 for d in decisions.values() if len(d) > 1)
    print(
        f"\nrun {run}: {total} publishes over 40 keys; workers joined after {joined_at}, kill -9 after "
        f"{killed_at}, restart after {restarted_at}; decisions logged {sum(len(d) for d in decisions.values())} "
        f"({decided_twice} events decided again after a redelivery, all alike: {not wrong}); "
        f"webhook deliveries {len(deliveries)} for {len(wanted_effects)} effects, "
        f"repeated effect ids {len(repeated_effects)}; {time.monotonic() - started:.0f}s"
    )
    for line in refetch_lines(stack.worker_logs):
        print(line)
    assert wrong == {}, list(wrong.items())[:10]
    assert unknown == set(), sorted(unknown)[:5]
    assert wrong_delivery == {}, list(wrong_delivery.items())[:10]
    assert set(per_event) == wanted_effects
    # A delivery the killed worker made but had not recorded is made again by the next owner, with
    # the same webhook-id (Standard Webhooks: the receiver's dedupe key) and the same body.
    bodies: dict[str, set[bytes]] = {}
    for _p, h, b in deliveries:
        bodies.setdefault(h["webhook-id"], set()).add(json.dumps(b, sort_keys=True).encode())
    assert all(len(v) == 1 for v in bodies.values()), "one webhook-id, two different bodies"
    # ... but never a second effect for one event (an event decided twice into two deliveries)
    effects_of: dict[str, set[str]] = {}
    for _p, h, b in deliveries:
        effects_of.setdefault(b["event_id"], set()).add(h["webhook-id"])
    assert all(len(v) == 1 for v in effects_of.values()), [e for e, v in effects_of.items() if len(v) > 1][:5]
    assert_no_gaps(stack)
