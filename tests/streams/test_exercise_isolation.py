"""Exercises never touch real state, as a property (issue 15, item 6): DRILL and TEST publishes
interleaved with ACTUAL ones on the same partition keys, with idempotency keys, SET areas and
auto-resolve ticks, leave the ACTUAL outcomes exactly as the ACTUAL publishes alone give them.

The driver below does what the ingress and the worker do to a sequence of publishes, with their
own functions: the ingress's Kafka keys (``state_key``, ``idempotency_stage_key``), the
idempotency stage's first-wins rule, and the control agent's ``apply_policy`` on the stored state
of each key, ticks included (``tick_record``). Kafka only moves records between them, in key order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.events.control import Policy
from app.domain.events.publish import idempotency_stage_key, state_key
from app.domain.pipeline import StoredControl, apply_policy
from streams.control_records import tick_record

ORG, TOPIC = "org_1", "wtp_1"
POLICIES = {
    "METRIC": Policy.from_profile(
        {
            "type": "METRIC",
            "rules": [{"metric_name": "level", "mode": "ABSOLUTE", "threshold": 10}],
            "exit_stable_limit": 2,
            "auto_resolve_duration": 1,  # one minute
        }
    ),
    "SET": Policy.from_profile({"type": "SET", "auto_resolve_duration": 1}),
}


@dataclass(frozen=True)
class Publish:
    status: str
    partition_key: str
    at_ms: int
    level: float
    areas: tuple[str, ...]
    idempotency_key: str | None
    tick: bool  # a tick of this key's state (the worker's auto-resolve timer), not a publish


def run(policy: Policy, items: list[Publish]) -> dict[int, list[str]]:
    """Index of each item → the decisions it produced ('duplicate' for a repeat the stage drops)."""
    states: dict[str, StoredControl] = {}
    first: dict[str, int] = {}
    out: dict[int, list[str]] = {}
    for offset, p in enumerate(items):
        key = state_key(ORG, TOPIC, p.status, p.partition_key)
        if p.tick:
            record: dict[str, Any] = tick_record(key.encode(), p.at_ms)
        else:
            if p.idempotency_key is not None:
                stage_key = idempotency_stage_key(ORG, TOPIC, p.status, p.idempotency_key)
                if stage_key in first:
                    out[offset] = ["duplicate"]
                    continue
                first[stage_key] = offset
            record = {
                "id": f"evt_{offset}",
                "organization_id": ORG,
                "topic_id": TOPIC,
                "status": p.status,
                "accepted_ms": p.at_ms,
                "event_control": {"partition_key": p.partition_key, "metrics": {"level": p.level}, "areas": p.areas},
            }
        steps, stored = apply_policy(policy, states.get(key), record, offset)
        states[key] = stored
        out[offset] = [str(outcome.decision) for _rec, outcome, _before in steps]
    return out


@st.composite
def sequences(draw: st.DrawFn) -> list[Publish]:
    count = draw(st.integers(min_value=1, max_value=40))
    at = 1_000_000
    items = []
    for _ in range(count):
        at += draw(st.sampled_from([1_000, 20_000, 61_000]))  # some gaps pass the one-minute auto-resolve
        items.append(
            Publish(
                status=draw(st.sampled_from(["ACTUAL", "DRILL", "TEST"])),
                partition_key=draw(st.sampled_from(["st-1", "st-2"])),
                at_ms=at,
                level=draw(st.sampled_from([2.0, 11.0, 12.0, 15.0])),
                areas=tuple(draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=2))),
                idempotency_key=draw(st.sampled_from([None, None, "k-1", "k-2"])),
                tick=draw(st.booleans()) and draw(st.booleans()),
            )
        )
    return items


@settings(max_examples=300, deadline=None)
@given(policy_type=st.sampled_from(sorted(POLICIES)), items=sequences())
def test_exercises_leave_the_actual_outcomes_as_the_actual_publishes_alone_give_them(
    policy_type: str, items: list[Publish]
) -> None:
    policy = POLICIES[policy_type]
    mixed = run(policy, items)
    actual_positions = [i for i, p in enumerate(items) if p.status == "ACTUAL"]
    alone = run(policy, [items[i] for i in actual_positions])
    assert [mixed[i] for i in actual_positions] == [alone[j] for j in range(len(actual_positions))]


def test_the_property_sees_an_exercise_that_touches_real_state() -> None:
    """The driver is not blind: a TEST publish with the ACTUAL's idempotency key, keyed without
    the status (the old ingress), would make the ACTUAL a duplicate; keyed with it, it does not."""
    items = [
        Publish("TEST", "st-1", 1_000, 15.0, (), "k-1", tick=False),
        Publish("ACTUAL", "st-1", 2_000, 15.0, (), "k-1", tick=False),
    ]
    assert run(POLICIES["METRIC"], items)[1] == ["NOTIFY"]
    assert run(POLICIES["METRIC"], items[1:])[0] == ["NOTIFY"]
