"""Event control: BYPASS, METRIC (ABSOLUTE, DELTA) and SET as pure state machines.

``decide(policy, state, event)`` → ``Outcome(state, decision, detail)``; ``tick(policy,
state, now_ms)`` applies the passage of time (auto-resolve). Both are driven by event time
(the record timestamp set when the publish was accepted), so a replay gives the same
decisions. Where the METRIC table leaves a case open ("not shown") the choices are written next
to the code and in docs/concepts/event-control.md:

- a value back at or above T while an episode is open resets the stable counter to 0;
- several rules: the event is "above" when any rule with its metric present is at or above
  its threshold; it NOTIFIES when any such rule raises its peak (ABSOLUTE) or changes by at
  least its threshold (DELTA); it counts towards the exit only when every present rule is
  below; an event carrying none of the policy's metrics changes nothing (SUPPRESS);
- DELTA's first value only records the value (SUPPRESS): there is no change to measure yet;
  the change is absolute, |v - previous| ≥ T;
- the peak hold: within ``peak_hold_duration`` of the peak's time an equal or lower value is
  suppressed; once it has expired the held peak is forgotten, so the next value at or above T
  notifies again (a renewed alert for a condition that persists) and becomes the peak;
- ``auto_resolve_duration`` counts from the episode's last NOTIFY; 0 disables it; a SET
  auto-release sends a release notice (RESOLVE) like a METRIC one;
- an INACTIVE policy behaves as BYPASS and leaves the state as it was (a pause): made ACTIVE
  again, the state resumes, and an episode whose auto-resolve time passed meanwhile is released
  first; a policy whose type changed starts from empty state (``tick`` included), its open
  episode ended first by a RESOLVE with reason ``policy_changed`` (:func:`end_for_policy_change`);
  the episode count is kept, so episode ids never repeat;
- only a value at or above an ABSOLUTE threshold opens an episode; a DELTA NOTIFY outside an
  episode is a single event, inside one it is a step of that episode; any NOTIFY resets the
  stable counter;
- a release belongs to its episode: the state keeps the workflows that ran for the episode's
  NOTIFYs (:func:`joined`, called by the agent once the workflows ran) and the RESOLVE reaches
  exactly those, whatever the releasing event's data (app/domain/workflows/workflow.py, ``release_reaches``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from operator import attrgetter
from typing import Any

MINUTE_MS = 60_000
STATE_VERSION = 1


class ControlDecision(StrEnum):
    NOTIFY = "NOTIFY"
    SUPPRESS = "SUPPRESS"
    RESOLVE = "RESOLVE"


class PolicyType(StrEnum):
    BYPASS = "BYPASS"
    METRIC = "METRIC"
    SET = "SET"


@dataclass(frozen=True, slots=True)
class MetricRule:
    metric_name: str
    mode: str  # "ABSOLUTE" | "DELTA"
    threshold: float


@dataclass(frozen=True, slots=True)
class Policy:
    type: PolicyType = PolicyType.BYPASS
    rules: tuple[MetricRule, ...] = ()
    peak_hold_minutes: float = 0.0
    exit_stable_limit: int = 0
    auto_resolve_minutes: float = 0.0
    # When the topic's policy type last changed (the API's clock, like event time; None: never):
    # an episode whose last NOTIFY is older belongs to a type since left, even if the type is back.
    type_changed_ms: int | None = None

    @classmethod
    def from_profile(cls, profile: dict[str, Any] | None, type_changed_ms: int | None = None) -> Policy:
        """The policy of a topic's ``control_policy_profile`` (validated at save time)."""
        if not profile or profile.get("status", "ACTIVE") != "ACTIVE":
            return cls()
        return cls(
            type=PolicyType(profile.get("type", "BYPASS")),
            rules=tuple(
                MetricRule(str(r["metric_name"]), str(r.get("mode", "ABSOLUTE")), float(r["threshold"]))
                for r in profile.get("rules") or ()
            ),
            peak_hold_minutes=float(profile.get("peak_hold_duration") or 0),
            exit_stable_limit=int(profile.get("exit_stable_limit") or 0),
            auto_resolve_minutes=float(profile.get("auto_resolve_duration") or 0),
            type_changed_ms=type_changed_ms,
        )


@dataclass(frozen=True, slots=True)
class ControlState:
    """Per organization, topic, publish status and partition key. Replace, never mutate."""

    policy_type: str = PolicyType.BYPASS.value
    episode_open: bool = False
    episode_seq: int = 0
    peaks: tuple[tuple[str, float, int], ...] = ()  # (metric, peak, at_ms)
    last_values: tuple[tuple[str, float], ...] = ()
    stable_count: int = 0
    set_members: tuple[str, ...] = ()
    last_decision: str | None = None
    last_notify_ms: int | None = None
    # The workflows that ran for the open episode's NOTIFYs (the opening one and any later one):
    # its release reaches them, whatever the releasing event's data. ``None``: not known (a state
    # stored before this was kept); the release then goes through each workflow's filter and sites.
    episode_workflows: tuple[str, ...] | None = ()
    version: int = STATE_VERSION

    def auto_resolve_at(self, policy: Policy) -> int | None:
        if not self.episode_open or policy.auto_resolve_minutes <= 0 or self.last_notify_ms is None:
            return None
        return self.last_notify_ms + int(policy.auto_resolve_minutes * MINUTE_MS)


class SourceAction(StrEnum):
    """What the publisher asks (``event_control.action``, docs/api.md, "Resolve and acknowledge from the
    source"): go through the policy, end the open episode, or acknowledge it."""

    TRIGGER = "trigger"
    RESOLVE = "resolve"
    ACKNOWLEDGE = "acknowledge"


# Enum members read once for the per-event functions below: a class attribute of an Enum costs
# several times a module global's.
_BYPASS, _SET = PolicyType.BYPASS, PolicyType.SET
_NOTIFY, _SUPPRESS, _RESOLVE = ControlDecision.NOTIFY, ControlDecision.SUPPRESS, ControlDecision.RESOLVE
_TRIGGER = SourceAction.TRIGGER

RESOLVED_BY_SOURCE = "resolved by the source"
ACKNOWLEDGED_BY_SOURCE = "acknowledged by the source"


@dataclass(frozen=True, slots=True)
class ControlEvent:
    at_ms: int
    metrics: dict[str, float] = field(default_factory=dict)
    areas: tuple[str, ...] = ()
    action: SourceAction = SourceAction.TRIGGER


@dataclass(frozen=True, slots=True)
class Outcome:
    state: ControlState
    decision: ControlDecision
    reason: str


def _fresh(policy: Policy, state: ControlState) -> ControlState:
    """The state under ``policy``: a state of another type starts empty, but for its episode
    count, so that a later episode never takes the id (``episode_key``) of an earlier one."""
    if state.policy_type == policy.type:
        return state
    return ControlState(policy_type=policy.type, episode_seq=state.episode_seq)


POLICY_CHANGED = "policy_changed"
# The key of a topic's spec where the API keeps when its policy type last changed (epoch ms).
POLICY_TYPE_CHANGED_KEY = "policy_type_changed_ms"


def end_for_policy_change(policy: Policy, state: ControlState) -> Outcome | None:
    """RESOLVE an open episode that the topic's change of policy ``type`` ended, with reason
    ``policy_changed``; None when there is nothing to end. An episode ended when its state is of
    another type than the policy's, or when its last NOTIFY is older than the last change of type
    (METRIC → BYPASS → METRIC: the state is METRIC again, but its episode belongs to the first
    period). The state after it is the new type's empty state, its episode count kept. Nothing
    happens under BYPASS (an INACTIVE policy decides as BYPASS too, and it is a pause that keeps
    the episode; BYPASS events read no state): the API resolves the incidents when the type
    changes, and the episode is ended here once a state-keeping type is back."""
    if policy.type is _BYPASS or not state.episode_open:
        return None
    if state.policy_type != policy.type:
        reason = f"{POLICY_CHANGED} ({state.policy_type} → {policy.type.value})"
    elif policy.type_changed_ms is not None and (state.last_notify_ms or 0) < policy.type_changed_ms:
        reason = f"{POLICY_CHANGED} (the type changed since the episode's last NOTIFY)"
    else:
        return None
    after = ControlState(policy_type=policy.type, episode_seq=state.episode_seq, last_decision=ControlDecision.RESOLVE)
    return Outcome(after, ControlDecision.RESOLVE, reason)


def decide(policy: Policy, state: ControlState, event: ControlEvent) -> Outcome:
    """The decision for one event and the state after it."""
    if policy.type is _BYPASS:
        return decide_bypass_action(state, event.action)
    state = _fresh(policy, state)
    expired = tick(policy, state, event.at_ms)
    if expired is not None:
        state = expired.state  # the episode ended by time before this event: it may open a new one
    if event.action is not _TRIGGER:
        return _decide_source_action(state, event)
    if policy.type is _SET:
        return _decide_set(state, event)
    return _decide_metric(policy, state, event)


def decide_bypass_action(state: ControlState, action: SourceAction) -> Outcome:
    """BYPASS: a trigger notifies; a resolve is a RESOLVE of the publisher's open incident (the
    incident sink finds it by the publisher's key), an acknowledge a SUPPRESS that acknowledges it."""
    if action is SourceAction.RESOLVE:
        return Outcome(state, ControlDecision.RESOLVE, RESOLVED_BY_SOURCE)
    if action is SourceAction.ACKNOWLEDGE:
        return Outcome(state, ControlDecision.SUPPRESS, ACKNOWLEDGED_BY_SOURCE)
    return Outcome(state, ControlDecision.NOTIFY, "bypass")


def _decide_source_action(state: ControlState, event: ControlEvent) -> Outcome:
    """METRIC and SET: a resolve ends the open episode as its release would (RESOLVE, the state
    empty but for the last values and the episode count); an acknowledge is a SUPPRESS that leaves
    the state as it is. Either with no episode open is a SUPPRESS that changes nothing (as the
    PagerDuty Events API accepts a resolve of nothing), its reason saying so in the trace."""
    if not state.episode_open:
        return Outcome(state, ControlDecision.SUPPRESS, f"{event.action.value}: no episode open")
    if event.action is SourceAction.ACKNOWLEDGE:
        return Outcome(state, ControlDecision.SUPPRESS, ACKNOWLEDGED_BY_SOURCE)
    return _done(
        state,
        ControlDecision.RESOLVE,
        RESOLVED_BY_SOURCE,
        event.at_ms,
        episode_open=False,
        stable_count=0,
        peaks=(),
        set_members=(),
        episode_workflows=(),
    )


_STATE_FIELDS = tuple(f.name for f in fields(ControlState))
_STATE_INDEX = {name: i for i, name in enumerate(_STATE_FIELDS)}
_state_values = attrgetter(*_STATE_FIELDS)


def _evolve(state: ControlState, changes: dict[str, Any]) -> ControlState:
    """``dataclasses.replace`` for the hot path (about 1.5 times faster: no per-field introspection)."""
    values = list(_state_values(state))
    for name, value in changes.items():
        values[_STATE_INDEX[name]] = value
    return ControlState(*values)


def _done(state: ControlState, decision: ControlDecision, reason: str, at_ms: int, **changes: Any) -> Outcome:
    """The outcome, with ``changes`` and the decision applied to the state in one construction.
    Enum members are stored as they are: a StrEnum member is its string (``.value`` is a slow
    descriptor on this path), and it encodes and compares as that string."""
    changes["last_decision"] = decision
    if decision is _NOTIFY:
        changes["last_notify_ms"] = at_ms
    return Outcome(_evolve(state, changes), decision, reason)


def _decide_set(state: ControlState, event: ControlEvent) -> Outcome:
    new = [a for a in dict.fromkeys(event.areas) if a not in state.set_members]
    if not new:
        return _done(state, _SUPPRESS, "no new element", event.at_ms)
    return _done(
        state,
        _NOTIFY,
        f"new elements {new}",
        event.at_ms,
        set_members=(*state.set_members, *new),
        episode_open=True,
        episode_seq=state.episode_seq + (0 if state.episode_open else 1),
        episode_workflows=state.episode_workflows if state.episode_open else (),
    )


def _decide_metric(policy: Policy, state: ControlState, event: ControlEvent) -> Outcome:
    metrics, at_ms = event.metrics, event.at_ms
    present = [r for r in policy.rules if r.metric_name in metrics]
    if not present:
        return _done(state, _SUPPRESS, "no metric of the policy in the event", at_ms)
    peaks = {m: (v, at) for m, v, at in state.peaks}
    hold_ms = int(policy.peak_hold_minutes * MINUTE_MS)
    above = raised = peaks_changed = False
    absolute_rules = False
    reasons: list[str] = []
    last = dict(state.last_values)
    for rule in present:
        name = rule.metric_name
        value = metrics[name]
        if rule.mode == "DELTA":
            previous = last.get(name)
            if previous is not None and abs(value - previous) >= rule.threshold:
                raised = True
                reasons.append(f"{name} changed by {value - previous:g}")
            continue
        absolute_rules = True
        if value < rule.threshold:
            continue
        above = True
        held = peaks.get(name)
        if held is not None and hold_ms > 0 and at_ms - held[1] >= hold_ms:
            held = None  # the hold expired: forget the peak
        if held is None or value > held[0] or not state.episode_open:
            peaks[name] = (value, at_ms)
            raised = peaks_changed = True
            reasons.append(f"{name}={value:g} ≥ {rule.threshold:g}, new peak")
    for rule in present:
        last[rule.metric_name] = metrics[rule.metric_name]
    last_values = tuple(sorted(last.items()))
    if raised:
        # Only a value at or above an ABSOLUTE threshold opens an episode; a DELTA change outside
        # one is a single event (NOTIFY, no episode), inside one it is a step of that episode.
        opens = above and not state.episode_open
        return _done(
            state,
            _NOTIFY,
            "; ".join(reasons),
            at_ms,
            last_values=last_values,
            peaks=tuple(sorted((m, v, at) for m, (v, at) in peaks.items())) if peaks_changed else state.peaks,
            stable_count=0,
            episode_open=state.episode_open or above,
            episode_seq=state.episode_seq + (1 if opens else 0),
            episode_workflows=() if opens else state.episode_workflows,
        )
    if above:
        return _done(state, _SUPPRESS, "at or above, peak held", at_ms, last_values=last_values, stable_count=0)
    if not state.episode_open or not absolute_rules:
        return _done(state, _SUPPRESS, "below threshold", at_ms, last_values=last_values)
    count = state.stable_count + 1
    if policy.exit_stable_limit > 0 and count >= policy.exit_stable_limit:
        return _done(
            state,
            _RESOLVE,
            f"{count} consecutive values below threshold",
            at_ms,
            last_values=last_values,
            episode_open=False,
            stable_count=0,
            peaks=(),
            episode_workflows=(),
        )
    return _done(
        state,
        _SUPPRESS,
        f"below threshold ({count})",
        at_ms,
        last_values=last_values,
        stable_count=count,
    )


def tick(policy: Policy, state: ControlState, now_ms: int) -> Outcome | None:
    """RESOLVE when the open episode's auto-resolve time has come; else None (nothing to do)."""
    if state.policy_type != policy.type:
        return None  # a state of another policy type has no episode under this one (see decide)
    due = state.auto_resolve_at(policy)
    if due is None or now_ms < due:
        return None
    closed = _evolve(
        state,
        {
            "episode_open": False,
            "stable_count": 0,
            "peaks": (),
            "set_members": (),
            "last_decision": _RESOLVE,
            "episode_workflows": (),
        },
    )
    return Outcome(closed, _RESOLVE, "auto-resolve")


def joined(state: ControlState, workflow_ids: list[str]) -> ControlState:
    """``state`` with ``workflow_ids`` (the workflows that ran for a NOTIFY of its open episode)
    among the episode's workflows, in first-seen order. Outside an episode, or when the episode's
    workflows are not known (``None``), nothing changes."""
    known = state.episode_workflows
    if not state.episode_open or known is None:
        return state
    new = [w for w in dict.fromkeys(workflow_ids) if w not in known]
    return _evolve(state, {"episode_workflows": (*known, *new)}) if new else state


def declared_type(profile: dict[str, Any] | None) -> str:
    """The policy ``type`` a topic's ``control_policy_profile`` declares, whatever its status (an
    INACTIVE policy is a pause of its type, not a change of it); none: BYPASS."""
    return str((profile or {}).get("type") or PolicyType.BYPASS.value)


def policy_type(profile: dict[str, Any] | None) -> PolicyType:
    """The effective policy type of a topic's ``control_policy_profile`` (none or INACTIVE: BYPASS)."""
    return Policy.from_profile(profile).type
