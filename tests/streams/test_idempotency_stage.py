"""The idempotency stage's handler on whole batches (streams/idempotency.py): the first of a key is
forwarded to the publish topic under its state key and event time, a repeat within the retention
is traced as a duplicate, a record redelivered after its key was stored is not forwarded again, a
key past the retention is deleted through the changelog, and bad input is dead-lettered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from aiokafka.structs import ConsumerRecord

from app.settings import Settings
from streams.idempotency import Expiry, IdempotencyStage
from tables.batch_stage import Checkpoint
from tables.codecs import StoredKey, dump_key, load_key
from tables.partition_store import PartitionStore

HOUR_MS = 3_600_000
KEY = b"org_1/wtp_1/ACTUAL/k1"


def _publish(event_id: str, at_ms: int, offset: int, key: bytes = KEY) -> ConsumerRecord[bytes, bytes]:
    value = orjson.dumps(
        {
            "id": event_id,
            "accepted_ms": at_ms,
            "state_key": f"org_1/wtp_1/ACTUAL/{event_id}",
            "organization_id": "org_1",
            "topic_id": "wtp_1",
            "attributes": {"idempotency_key": key.rsplit(b"/", 1)[1].decode()},
        }
    )
    return ConsumerRecord("tocsin.idempotency", 0, offset, at_ms, 0, key, value, None, len(key), len(value), [])


def _stage(tmp_path: Path) -> tuple[IdempotencyStage, PartitionStore]:
    stage = IdempotencyStage(Settings(idempotency_retention_hours=1))
    return stage, PartitionStore(tmp_path / "idempotency-0.db", shared_memory=False)


async def _batch(stage: IdempotencyStage, store: PartitionStore, *records: Any) -> Checkpoint:
    checkpoint = Checkpoint(producer=None, changelog=None)  # type: ignore[arg-type]  # nothing is sent here
    await stage({0: list(records)}, checkpoint, {0: store})
    store.apply(checkpoint.changes[0], 1)  # as the commit writes it locally
    stage.committed()
    return checkpoint


def _sent(checkpoint: Checkpoint, topic: str) -> list[tuple[Any, ...]]:
    return [o for o in checkpoint.outputs if o[0] == topic]


async def test_the_first_is_forwarded_a_repeat_is_traced_and_a_redelivery_is_not_forwarded_again(
    tmp_path: Path,
) -> None:
    stage, store = _stage(tmp_path)
    first = await _batch(stage, store, _publish("evt_1", 1_000, 5), _publish("evt_2", 2_000, 6))
    [(_topic, _p, state_key, value, at_ms, _headers)] = _sent(first, stage.publish)
    assert state_key == b"org_1/wtp_1/ACTUAL/evt_1" and at_ms == 1_000
    forwarded = orjson.loads(value)
    assert forwarded["id"] == "evt_1" and "state_key" not in forwarded
    assert forwarded["idempotency"] == {"key": "k1", "outcome": "first"}
    [(_topic, partition, _key, trace, _at, _h)] = _sent(first, stage.traces)
    [item] = orjson.loads(trace)["items"]
    assert partition == 0 and item["event_id"] == "evt_2"
    assert item["steps"][-1]["detail"] == {"key": "k1", "outcome": "duplicate", "duplicate_of": "evt_1"}
    assert load_key(store.get(KEY)) == StoredKey("evt_1", 1_000, 5)
    again = await _batch(stage, store, _publish("evt_1", 1_000, 5))  # fetched again after a kill before the commit
    assert again.outputs == []
    store.close()


async def test_a_key_past_the_retention_is_deleted_and_forwarded_as_first_again(tmp_path: Path) -> None:
    stage, store = _stage(tmp_path)
    other = b"org_1/wtp_1/ACTUAL/k2"
    await _batch(stage, store, _publish("evt_1", 1_000, 1), _publish("evt_2", 1_500, 2, key=other))
    later = 1_500 + HOUR_MS + 1
    checkpoint = await _batch(stage, store, _publish("evt_3", later, 3))
    assert checkpoint.changes[0][other] is None, "the other key's retention passed: deleted through the changelog"
    assert store.get(other) is None
    assert load_key(store.get(KEY)) == StoredKey("evt_3", later, 3)
    assert [orjson.loads(o[3])["id"] for o in _sent(checkpoint, stage.publish)] == ["evt_3"]
    store.close()


async def test_bad_input_and_an_unreadable_key_are_dead_lettered(tmp_path: Path) -> None:
    stage, store = _stage(tmp_path)
    store.apply({KEY: b"not json"}, 0)
    broken = ConsumerRecord("tocsin.idempotency", 0, 9, 0, 0, b"k", b"{", None, 1, 1, [])
    checkpoint = await _batch(stage, store, broken, _publish("evt_1", 1_000, 10))
    reasons = [orjson.loads(o[3]) for o in _sent(checkpoint, stage.dead_letters)]
    assert [r["stage"] for r in reasons] == ["idempotency", "idempotency-state"]
    assert reasons[0]["reason"].startswith("undecodable publish record") and reasons[0]["offset"] == 9
    assert reasons[1]["key"] == KEY.decode()
    # the unreadable key counts as absent: the event is forwarded as the first of its key
    assert [orjson.loads(o[3])["id"] for o in _sent(checkpoint, stage.publish)] == ["evt_1"]
    assert load_key(store.get(KEY)) == StoredKey("evt_1", 1_000, 10)
    store.close()


async def test_a_batch_that_did_not_commit_rebuilds_the_retention_windows(tmp_path: Path) -> None:
    """The expired entries a failed batch took from the windows are found again: the windows are
    rebuilt from the stores before the next batch."""
    stage, store = _stage(tmp_path)
    await _batch(stage, store, _publish("evt_1", 1_000, 1))
    later = 1_000 + HOUR_MS + 1
    failed = Checkpoint(producer=None, changelog=None)  # type: ignore[arg-type]
    await stage({0: [_publish("evt_2", later, 2, key=b"org_1/wtp_1/ACTUAL/k9")]}, failed, {0: store})
    assert failed.changes[0][KEY] is None  # expired, but this batch never commits
    retried = await _batch(stage, store, _publish("evt_2", later, 2, key=b"org_1/wtp_1/ACTUAL/k9"))
    assert retried.changes[0][KEY] is None, "the retried batch deletes the expired key again"
    assert store.get(KEY) is None
    store.close()


def test_dump_and_load_agree() -> None:
    assert load_key(dump_key(StoredKey("e", 1, 2))) == StoredKey("e", 1, 2)


async def test_more_expired_keys_than_the_window_holds_are_all_deleted_in_one_batch(tmp_path: Path) -> None:
    """Defect (found in review): the keys past the retention beyond the in-memory window were found
    again by a scan of the store, which still held the ones this batch had just deleted (deletions
    are written after the commit): the scan found them again and again, and the loop, without an
    await, froze the worker. Now the scan sees the store as the batch leaves it."""
    stage, store = _stage(tmp_path)
    stage.expiry = Expiry(size=4)  # a window far smaller than the keys
    old = [_publish(f"evt_{i}", 1_000 + i, i, key=f"org_1/wtp_1/ACTUAL/old-{i}".encode()) for i in range(30)]
    await _batch(stage, store, *old)
    later = 1_000 + 30 + HOUR_MS + 1
    checkpoint = await _batch(stage, store, _publish("evt_new", later, 100, key=b"org_1/wtp_1/ACTUAL/new"))
    deleted = [k for k, v in checkpoint.changes[0].items() if v is None]
    assert len(deleted) == 30
    assert [k for k, _v in store.items() if b"old-" in k] == []
    store.close()
