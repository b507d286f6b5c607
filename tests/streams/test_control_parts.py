"""The worker's pieces that need no broker: table codecs, the outbox's batching, the auto-resolve
due index, the idempotency expiry index, and how the control agent turns one record into
outcomes (the release due before an event comes first)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from app.domain.events.control import ControlDecision, ControlState, Policy
from app.domain.pipeline import StoredControl, apply_policy, release_record
from app.domain.workflows.workflow_stage import episode_key
from streams.control_caches import DueIndex
from streams.control_records import tick_record
from streams.idempotency import Expiry
from streams.outbox import chunks, items_of
from tables.codecs import StoredKey, UnreadableValue, dump_control, dump_key, load_control, load_key

METRIC = Policy.from_profile(
    {
        "type": "METRIC",
        "rules": [{"metric_name": "level", "threshold": 10}],
        "exit_stable_limit": 2,
        "auto_resolve_duration": 1,  # one minute
    }
)


def _record(event_id: str, at_ms: int, level: float) -> dict[str, object]:
    return {
        "id": event_id,
        "organization_id": "org_1",
        "topic_id": "wtp_1",
        "status": "ACTUAL",
        "accepted_ms": at_ms,
        "event_control": {"partition_key": "p", "metrics": {"level": level}},
    }


def test_control_state_round_trips_through_its_codec() -> None:
    state = ControlState(
        policy_type="METRIC",
        episode_open=True,
        episode_seq=3,
        peaks=(("level", 12.5, 1000),),
        last_values=(("level", 12.5),),
        stable_count=1,
        set_members=("a", "b"),
        last_decision="NOTIFY",
        last_notify_ms=1000,
    )
    stored = StoredControl(state, offset=41, seq=7, due_ms=61_000)
    assert load_control(dump_control(stored)) == stored


@pytest.mark.parametrize(
    "raw",
    [b"not json", b"[]", b'{"v": 99, "state": {}}', b'{"v": 1}', b'{"v": 1, "offset": 1, "seq": 1, "state": {}}'],
    ids=["not json", "not an object", "unknown version", "no state", "state lacks fields"],
)
def test_an_unreadable_control_state_is_refused_with_the_reason(raw: bytes) -> None:
    """Before: read as None, so the key silently started from empty state (a NOTIFY could repeat)."""
    with pytest.raises(UnreadableValue, match="control state unreadable"):
        load_control(raw)


def test_idempotency_value_round_trips_and_bad_values_are_refused() -> None:
    stored = StoredKey("evt_1", 123, 9)
    assert load_key(dump_key(stored)) == stored
    assert load_key(None) is None
    for raw in (b'{"v": 2}', b"\xff"):
        with pytest.raises(UnreadableValue, match="idempotency value unreadable"):
            load_key(raw)


def test_chunks_keep_order_and_size_and_items_of_reads_both_shapes() -> None:
    items = [orjson.dumps({"n": i, "pad": "x" * 100}) for i in range(50)]
    records = chunks(items, limit=1000)
    assert len(records) > 1 and all(len(r) <= 1000 for r in records)
    decoded = [item["n"] for r in records for item in items_of(orjson.loads(r))]
    assert decoded == list(range(50))
    huge = orjson.dumps({"pad": "y" * 5000})
    assert chunks([huge], limit=1000) == [b'{"items":[' + huge + b"]}"]
    assert items_of({"event_id": "e"}) == [{"event_id": "e"}]


def test_due_index_sends_one_tick_per_due_state_until_the_agent_applies_it() -> None:
    index = DueIndex()
    index.update(b"a", 1_000)
    index.update(b"b", 50_000)
    index.update(b"c", None)
    assert index.take_due(999) == []
    assert index.take_due(1_000) == [b"a"]
    assert index.take_due(2_000) == []  # sent, not applied yet
    assert index.take_due(32_001) == [b"a"]  # not applied within 30 s: sent again
    index.update(b"a", None)  # the agent applied it: released
    assert index.take_due(50_000) == [b"b"]


def test_due_index_rebuilds_from_table_values() -> None:
    index = DueIndex()
    state = ControlState(policy_type="METRIC", episode_open=True, last_notify_ms=0)
    items = [(b"k1", dump_control(StoredControl(state, 1, 1, 60_000))), (b"k2", dump_control(StoredControl(state)))]
    index.rebuild(frozenset({0}), items)
    assert index.due == {b"k1": 60_000} and index.assignment == frozenset({0})


def test_expiry_returns_keys_in_event_time_order_up_to_the_cutoff() -> None:
    expiry = Expiry()
    expiry.rebuild({0: []})
    for at, key in [(30, b"c"), (10, b"a"), (20, b"b")]:
        expiry.add(0, at, key)
    assert expiry.expired(0, 20) == [(10, b"a"), (20, b"b")]
    assert expiry.expired(0, 25) == []
    assert expiry.expired(1, 10**12) == []


def test_tick_records_name_their_state() -> None:
    tick = tick_record(b"org_1/wtp_1/DRILL/station/with/slashes", 5)
    assert (tick["organization_id"], tick["topic_id"], tick["status"]) == ("org_1", "wtp_1", "DRILL")
    assert tick["event_control"] == {"partition_key": "station/with/slashes"} and tick["kind"] == "tick"


def test_an_event_after_the_due_time_is_preceded_by_the_release_it_finds() -> None:
    steps, stored = apply_policy(METRIC, None, _record("evt_a", 0, 12), offset=0)
    assert [o.decision for _, o, _ in steps] == [ControlDecision.NOTIFY]
    assert stored.due_ms == 60_000 and stored.offset == 0 and stored.seq == 1

    steps, stored = apply_policy(METRIC, stored, _record("evt_b", 90_000, 11), offset=1)
    assert [o.decision for _, o, _ in steps] == [ControlDecision.RESOLVE, ControlDecision.NOTIFY]
    release, _, _ = steps[0]
    assert release["kind"] == "tick" and release["accepted_ms"] == 60_000
    assert release["id"] == release_record(_record("evt_b", 90_000, 11), 60_000)["id"]  # same on a replay
    assert release["id"] != "evt_b"
    assert stored.state.episode_open and stored.state.episode_seq == 2 and stored.seq == 2


def test_a_tick_resolves_only_when_due() -> None:
    _, stored = apply_policy(METRIC, None, _record("evt_a", 0, 12), offset=0)
    early = {**_record("tick_1", 30_000, 0), "kind": "tick"}
    steps, after = apply_policy(METRIC, stored, early, offset=1)
    assert steps == [] and after.state == stored.state
    due = {**_record("tick_2", 60_000, 0), "kind": "tick"}
    steps, after = apply_policy(METRIC, stored, due, offset=2)
    assert [o.decision for _, o, _ in steps] == [ControlDecision.RESOLVE] and steps[0][0] is due
    assert not after.state.episode_open and after.due_ms is None


def test_episode_keys_differ_by_state_and_episode() -> None:
    assert episode_key("o/t/ACTUAL/p", 1) == episode_key("o/t/ACTUAL/p", 1)
    assert len({episode_key("o/t/ACTUAL/p", 1), episode_key("o/t/ACTUAL/p", 2), episode_key("o/t/DRILL/p", 1)}) == 3


async def test_the_stage_dead_letters_an_unreadable_state_and_counts_it(tmp_path: Path) -> None:
    """Defect: an unreadable state restarted empty without a word. Now its raw value goes to the
    dead-letter topic with the key and the reason, the metric counts it, and the key starts empty."""
    from aiokafka.structs import ConsumerRecord

    from app.observability import metrics
    from app.settings import Settings
    from streams.control_batch import ControlStage
    from tables.batch_stage import Checkpoint
    from tables.partition_store import PartitionStore

    key = b"org_1/wtp_1/ACTUAL/st-1"
    store = PartitionStore(tmp_path / "control-3.db", shared_memory=False)
    store.apply({key: b'{"v": 1, "state": {"policy_type": 1}}'}, 0)
    stage = ControlStage(Settings())
    checkpoint = Checkpoint(producer=None, changelog=None)  # type: ignore[arg-type]  # nothing is sent here
    rec = ConsumerRecord("t", 3, 77, 0, 0, key, b"{}", None, len(key), 2, [])
    before = metrics.REGISTRY.get_sample_value("tocsin_unreadable_states_total", {"table": "control"}) or 0.0
    assert stage._state_of(checkpoint, rec, store, {}) is None
    store.close()
    assert metrics.REGISTRY.get_sample_value("tocsin_unreadable_states_total", {"table": "control"}) == before + 1
    [(topic, _partition, sent_key, value, _at, _headers)] = checkpoint.outputs
    body = orjson.loads(value)
    assert topic == stage.dead_letters and sent_key == key
    assert body["stage"] == "control-state" and body["key"] == "org_1/wtp_1/ACTUAL/st-1"
    assert body["partition"] == 3 and body["offset"] == 77
