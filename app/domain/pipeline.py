"""The per-event pipeline: one pure function of (record, stored state, topic configuration, time)
that gives the state to store, what to send and the event's trace.

``process`` runs, for one publish record or one auto-resolve tick, the stages in this order
(docs/architecture.md, "The per-event path"): event-control policy (BYPASS, METRIC, SET;
app/domain/events/control.py) → workflow mode match → sharing → sites → filter → actions
(app/domain/workflows/workflow_stage.py). Time is the record's own: ``accepted_ms``, the event time
the ingress stamped (a tick carries the timer's ``now``), so a replay gives the same decisions. The
control stage (streams/control_batch.py) only decodes, reads the stored state, calls ``process``, sends its
outputs and writes its state.

A record may give more than one decided record: the release that comes before an event (its
episode's policy type changed, or its auto-release was due before its tick came) has a record
of its own (:func:`release_record`), then the event's own decision follows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from app.domain.events.control import (
    ACKNOWLEDGED_BY_SOURCE,
    POLICY_TYPE_CHANGED_KEY,
    ControlDecision,
    ControlEvent,
    ControlState,
    Outcome,
    Policy,
    PolicyType,
    SourceAction,
    decide,
    decide_bypass_action,
    end_for_policy_change,
    joined,
    tick,
)
from app.domain.workflows.topic_config import TopicConfig
from app.domain.workflows.workflow_stage import WorkflowOutputs, episode_key, run_workflows


@dataclass(frozen=True, slots=True)
class StoredControl:
    """A control state as stored: ``offset`` is the publish-topic offset of the last record
    applied to it (a redelivered record at or below it was applied, and its outputs delivered,
    before the state was written), ``seq`` counts the records applied, ``due_ms`` is when the
    auto-resolve timer must tick (computed with the policy at write time)."""

    state: ControlState
    offset: int = -1
    seq: int = 0
    due_ms: int | None = None


# A state and its view as traced: the "after" of a key's last record is the "before" of its next.
View = tuple[ControlState, dict[str, Any]]


@dataclass(slots=True)
class Processed:
    """What one record gives: each decided record with its workflow outputs (in order), the state
    to store (None: nothing to store — a BYPASS event, or a record applied before), and the view
    of the state after it (for the next record of the same key)."""

    decided: list[tuple[dict[str, Any], WorkflowOutputs]] = field(default_factory=list)
    stored: StoredControl | None = None
    view: View | None = None
    skipped: bool = False  # at or below the stored state's offset: applied, outputs delivered, before


# Enum members read once: a class attribute of an Enum costs several times a global's on this path.
_BYPASS, _NOTIFY, _RESOLVE = PolicyType.BYPASS, ControlDecision.NOTIFY, ControlDecision.RESOLVE
_TRIGGER = SourceAction.TRIGGER

_policies: dict[int, tuple[Any, Policy]] = {}


def policy_of(cfg: TopicConfig | None) -> Policy:
    """The policy of a topic configuration (none: BYPASS), parsed once per loaded configuration."""
    if cfg is None:
        return Policy()
    cached = _policies.get(id(cfg))
    if cached is not None and cached[0] is cfg:
        return cached[1]
    if len(_policies) > 10_000:
        _policies.clear()
    policy = Policy.from_profile(cfg.spec.get("control_policy_profile"), cfg.spec.get(POLICY_TYPE_CHANGED_KEY))
    _policies[id(cfg)] = (cfg, policy)
    return policy


def reads_state(cfg: TopicConfig | None, record: dict[str, Any]) -> bool:
    """Whether ``process`` needs the record's stored state: a BYPASS event has none."""
    return record.get("kind") == "tick" or policy_of(cfg).type is not PolicyType.BYPASS


def source_action(record: dict[str, Any]) -> SourceAction:
    """The publisher's ``event_control.action`` (absent: trigger)."""
    action = (record.get("event_control") or {}).get("action")
    return SourceAction(action) if action else _TRIGGER


def control_event(record: dict[str, Any]) -> ControlEvent:
    ec = record.get("event_control") or {}
    metrics, areas, action = ec.get("metrics"), ec.get("areas"), ec.get("action")
    return ControlEvent(
        int(record["accepted_ms"]),
        {str(k): float(v) for k, v in metrics.items()} if metrics else {},
        tuple([str(a) for a in areas]) if areas else (),
        SourceAction(action) if action else _TRIGGER,  # as source_action(record)
    )


def state_view(state: ControlState, policy: Policy) -> dict[str, Any]:
    """The state as the trace and the control_state route show it."""
    hold_ms = int(policy.peak_hold_minutes * 60_000)
    peaks = state.peaks
    return {
        "policy_type": state.policy_type,
        "episode_open": state.episode_open,
        "episode_seq": state.episode_seq,
        "peak": (
            {
                m: {"value": v, "at_ms": at, "hold_until_ms": at + hold_ms} if hold_ms else {"value": v, "at_ms": at}
                for m, v, at in peaks
            }
            if peaks
            else {}
        ),
        "last_values": dict(state.last_values),
        "stable_count": state.stable_count,
        "set_members": list(state.set_members),
        "last_decision": state.last_decision,
        "auto_resolve_at_ms": state.auto_resolve_at(policy),
    }


Step = tuple[dict[str, Any], Outcome, ControlState]  # (record, outcome, state before it)


def release_record(record: dict[str, Any], at_ms: int) -> dict[str, Any]:
    """The auto-release an event finds due before its own decision (its tick had not come yet):
    a record of its own, with an id derived from the event's so a replay gives the same one."""
    digest = hashlib.sha256(f"{record['id']}:release".encode()).hexdigest()[:26]
    return {**record, "kind": "tick", "id": f"evt_{digest}", "accepted_ms": at_ms, "event": {}}


def tick_record(key: str, now_ms: int, event_id: str) -> dict[str, Any]:
    """The auto-resolve tick of the state ``key`` (organization/topic/status/partition key) at
    ``now_ms``: a record keyed like the state, which ``process`` applies like an event."""
    org_id, topic_id, status, partition = key.split("/", 3)
    return {
        "kind": "tick",
        "id": event_id,
        "organization_id": org_id,
        "topic_id": topic_id,
        "status": status,
        "event_control": {"partition_key": partition},
        "accepted_ms": now_ms,
        "v": 1,
    }


def apply_policy(
    policy: Policy, stored: StoredControl | None, record: dict[str, Any], offset: int
) -> tuple[list[Step], StoredControl]:
    """The outcomes of one record, in order, and the state to store after it. A tick yields at
    most a RESOLVE; an event yields the release that comes before it, if any (its episode's
    policy type changed, or its auto-release was due), then its own decision."""
    state = stored.state if stored is not None else ControlState(policy_type=policy.type)
    at_ms = int(record["accepted_ms"])
    is_tick = record.get("kind") == "tick"
    steps: list[Step] = []
    ended = end_for_policy_change(policy, state)  # the type changed: its episode ends first
    if ended is not None:
        steps.append((record if is_tick else release_record(record, at_ms), ended, state))
        state = ended.state
    released = tick(policy, state, at_ms)
    if released is not None:
        due = state.auto_resolve_at(policy) or at_ms
        steps.append((record if is_tick else release_record(record, due), released, state))
        state = released.state
    if not is_tick:
        outcome = decide(policy, state, control_event(record))
        steps.append((record, outcome, state))
        state = outcome.state
    seq = (stored.seq if stored is not None else 0) + 1
    return steps, StoredControl(state, offset, seq, state.auto_resolve_at(policy))


_BYPASS_CONTROL = {"policy": PolicyType.BYPASS, "decision": ControlDecision.NOTIFY}


def process(
    record: dict[str, Any],
    stored: StoredControl | None,
    cfg: TopicConfig | None,
    *,
    key: str,
    offset: int,
    prior_view: View | None = None,
) -> Processed:
    """One publish record or tick through the whole pipeline, against the state ``stored`` under
    ``key`` (its organization/topic/status/partition key: an exercise's key is never a real
    one's). ``offset`` is the record's place in its partition, kept in the state so that a
    redelivered record is recognised. ``prior_view`` is the state and view this key's previous
    record left (a state compared by identity: any other is viewed afresh).

    Each decided record carries ``decision``, ``episode_key`` (NOTIFYs and the RESOLVE of an
    episode share it; a single event has none) and ``control`` (policy, decision, reason, state
    before and after). A RESOLVE reaches exactly the workflows that ran for its episode's
    NOTIFYs; the workflows a NOTIFY ran join the open episode in the stored state."""
    policy = policy_of(cfg)
    out = Processed()
    if policy.type is _BYPASS and record.get("kind") != "tick":
        action = source_action(record)
        if action is _TRIGGER:
            rec = {**record, "decision": _NOTIFY, "control": dict(_BYPASS_CONTROL)}
            out.decided.append((rec, run_workflows(rec, cfg, ())))
            return out
        # a resolve or an acknowledge of the publisher's open incident: the workflows' filter and
        # sites decide which it reaches (there is no episode to remember them)
        outcome = decide_bypass_action(ControlState(), action)
        by_source = {"policy": _BYPASS, "decision": outcome.decision, "reason": outcome.reason}
        rec = {**record, "decision": outcome.decision, "control": by_source}
        if outcome.reason == ACKNOWLEDGED_BY_SOURCE:
            rec["acknowledge"] = True
        out.decided.append((rec, run_workflows(rec, cfg, None)))
        return out
    if stored is not None and offset <= stored.offset:
        out.skipped = True
        return out
    steps, new = apply_policy(policy, stored, record, offset)
    view = prior_view
    for step_record, outcome, before in steps:
        after, decision = outcome.state, outcome.decision
        # An episode opens with a NOTIFY and ends with its RESOLVE; a NOTIFY outside any
        # episode (DELTA) is a single event, like a BYPASS one.
        in_episode = after.episode_open or decision is _RESOLVE
        after_view = state_view(after, policy)
        control: dict[str, Any] = {
            "policy": policy.type,
            "decision": decision,
            "reason": outcome.reason,
            "before": view[1] if view is not None and view[0] is before else state_view(before, policy),
            "after": after_view,
        }
        rec = {
            **step_record,
            "decision": decision,  # a StrEnum member is its string (no slow .value)
            "episode_key": episode_key(key, after.episode_seq) if in_episode else None,
            "control": control,
        }
        # A release reaches the workflows that ran for its episode's NOTIFYs, kept in the state; so
        # does the source's acknowledge of the open episode.
        acknowledges = outcome.reason == ACKNOWLEDGED_BY_SOURCE
        if acknowledges:
            rec["acknowledge"] = True
        releases = decision is _RESOLVE or acknowledges
        outputs = run_workflows(rec, cfg, before.episode_workflows if releases else ())
        if outputs.notified and after.episode_open:  # a NOTIFY is a record's last step: ``new`` is after it
            joined_state = joined(after, outputs.notified)
            if joined_state is not after:  # not when every workflow that ran is already the episode's
                after = joined_state
                new = replace(new, state=after)
        view = (after, after_view)
        out.decided.append((rec, outputs))
    out.stored, out.view = new, view
    return out


def state_mirror(key: str, stored: StoredControl, record: dict[str, Any]) -> dict[str, Any]:
    """The state as the API's control_state route shows it (the trace sink stores the newest):
    ``record`` is the last record decided against it."""
    return {
        "key": key,
        "organization_id": record["organization_id"],
        "topic_id": record["topic_id"],
        "status": record["status"],
        "partition_key": (record.get("event_control") or {}).get("partition_key"),
        "seq": stored.seq,
        "view": record["control"]["after"],
    }
