"""No record may block a partition: a publish record the control agent cannot process (here a
metric that is not a number, as a record written past the API's validation would carry) sits
between other organizations' events on the one partition; after bounded retries it goes to the
dead-letter topic with the reason, and every other organization's event around it is decided."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import httpx
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from app.domain.events.publish import state_key
from devstack.ports import run_coro_sync
from tests.support.scaling import decision_lines
from tests.support.stack import Stack, wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def _publish(client: httpx.Client, topic: str, n: int, prefix: str) -> list[str]:
    ids = []
    for i in range(n):
        r = client.post(f"/workflow_topics/{topic}/publish", json={"status": "ACTUAL", "data": {"i": i}})
        assert r.status_code == 202, r.text
        ids.append(r.json()["id"])
    return ids


@pytest.mark.worker_errors(
    r"control: a batch of \d+ records failed", r"control: a record that fails alone is dead-lettered"
)
def test_a_poison_record_is_dead_lettered_and_other_organizations_events_are_decided(
    stack_factory: Callable[..., Stack],
) -> None:
    stack = stack_factory(partitions=1).start()  # one partition: every organization shares it
    other = stack.new_organization("Other org")
    prefix = stack.env["TOCSIN_TOPIC_PREFIX"]
    bootstrap = stack.env["TOCSIN_KAFKA_BOOTSTRAP"]
    with (
        stack.client() as a,
        httpx.Client(
            base_url=f"{stack.base_url}/v1/organizations/{other['organization_id']}",
            headers={"Authorization": f"Bearer {other['access_token']}"},
            timeout=30,
        ) as b,
    ):
        levels = a.post(
            "/workflow_topics",
            json={
                "key": "levels",
                "name_en": "levels",
                "control_policy_profile": {
                    "type": "METRIC",
                    "rules": [{"metric_name": "level", "mode": "ABSOLUTE", "threshold": 10}],
                },
            },
        )
        assert levels.status_code == 201, levels.text
        assert b.post("/workflow_topics", json={"key": "quake", "name_en": "quake"}).status_code == 201
        before = _publish(b, "quake", 5, "b")

        org_a, topic_a = stack.org, levels.json()["id"]
        poison = {
            "v": 1,
            "id": "evt_poison000000000000000000",
            "organization_id": org_a,
            "topic_id": topic_a,
            "status": "ACTUAL",
            "accepted_ms": int(time.time() * 1000),
            "data": {},
            "event_control": {"partition_key": "st-1", "metrics": {"level": "not a number"}},
        }

        async def produce() -> None:
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
            await producer.start()
            try:
                key = state_key(org_a, topic_a, "ACTUAL", "st-1").encode()
                await producer.send_and_wait(f"{prefix}publish", json.dumps(poison).encode(), key=key, partition=0)
            finally:
                await producer.stop()

        run_coro_sync(produce)
        after = _publish(b, "quake", 5, "b")
        wanted = set(before + after)

        def decided() -> dict[str, list[str]] | None:
            found = decision_lines(stack.worker_logs)
            return found if wanted <= found.keys() else None

        decisions = wait_for(decided, 120, "the other organization's events after the poison record", 0.5)
        assert all(decisions[e] == ["NOTIFY"] for e in wanted)
        assert "evt_poison000000000000000000" not in decisions

        async def dead_letters() -> list[dict[str, object]]:
            consumer = AIOKafkaConsumer(
                f"{prefix}dead-letter", bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None
            )
            await consumer.start()
            try:
                batch = await consumer.getmany(timeout_ms=5000)
                return [json.loads(r.value) for records in batch.values() for r in records]
            finally:
                await consumer.stop()

        letters = run_coro_sync(dead_letters)
        [letter] = [d for d in letters if "evt_poison" in str(d.get("value"))]
        assert letter["stage"] == "control"
        assert "processing failed 3 times" in str(letter["reason"]) and "ValueError" in str(letter["reason"])
        metrics = httpx.get(f"{stack.worker_urls[0]}/metrics", timeout=10).text
        assert 'tocsin_dead_letters_total{stage="control"} 1.0' in metrics


BAD_RECORDS = {
    "publish": "control",
    "idempotency": "idempotency",
    "actions.incident": "sink:incidents",
    "actions.webhook": "sink:deliveries:WEBHOOK",
    "actions.push": "sink:deliveries:PUSH",
    "actions.email": "sink:deliveries:EMAIL",
    "traces": "sink:traces",
}


@pytest.mark.worker_errors(r"sink=\S+ dead-lettered a record: undecodable record")
def test_a_malformed_record_on_every_topic_is_dead_lettered_and_the_partition_goes_on(
    stack_factory: Callable[..., Stack],
) -> None:
    """Bytes that are not a record, on each topic an agent consumes (one partition each): each goes
    to the dead-letter topic with its stage and reason, and an event published after them is
    decided, makes its incident and leaves its trace (every partition moved past the bad record)."""
    stack = stack_factory(partitions=1).start()
    prefix = stack.env["TOCSIN_TOPIC_PREFIX"]
    bootstrap = stack.env["TOCSIN_KAFKA_BOOTSTRAP"]
    with stack.client() as client:
        assert client.post("/workflow_topics", json={"key": "quake", "name_en": "quake"}).status_code == 201
        book = client.post("/operation_books", json={"name": "b", "incident_title_template": "{event.name}"})
        workflow = client.post(
            "/workflows",
            json={
                "name": "w",
                "topic": "quake",
                "mode": "ACTUAL",
                "actions": [{"type": "RUN_OPERATION_BOOK", "operation_book_id": book.json()["id"]}],
            },
        )
        assert workflow.status_code == 201, workflow.text

        async def produce() -> None:
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
            await producer.start()
            try:
                for name in BAD_RECORDS:
                    await producer.send_and_wait(f"{prefix}{name}", b"\xff not a record", key=b"k", partition=0)
            finally:
                await producer.stop()

        run_coro_sync(produce)
        r = client.post(
            "/workflow_topics/quake/publish",
            json={"status": "ACTUAL", "data": {}, "event": {"id": "after-bad", "name": "after"}},
        )
        assert r.status_code == 202, r.text
        event_id = r.json()["id"]

        def done() -> bool:
            trace = client.get(f"/events/{event_id}")
            incidents = client.get("/incidents").json()["items"]
            return trace.status_code == 200 and any(i["server_event_id"] == event_id for i in incidents)

        wait_for(done, 120, "the event after the bad records to make its incident and trace", 0.5)

        async def dead_letters() -> list[dict[str, object]]:
            consumer = AIOKafkaConsumer(
                f"{prefix}dead-letter", bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None
            )
            await consumer.start()
            try:
                found: list[dict[str, object]] = []
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and len(found) < len(BAD_RECORDS):
                    batch = await consumer.getmany(timeout_ms=1000)
                    found += [json.loads(r.value) for records in batch.values() for r in records]
                return found
            finally:
                await consumer.stop()

        letters = run_coro_sync(dead_letters)
        stages = sorted(str(d["stage"]) for d in letters)
        assert stages == sorted(BAD_RECORDS.values()), stages
        assert all("undecodable" in str(d["reason"]) for d in letters), letters
