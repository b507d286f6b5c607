"""Event control, properties over random sequences of (dt_ms, value).

Values are small halves (0, 0.5, ..., 10) so equal values and values equal to T happen often;
a value of None is an event without the policy's metric. Gaps go up to 60 s (half of them round
multiples of 10 s) against a one-minute peak hold and one- or two-minute auto-resolve, so holds
expire and episodes time out in many examples, some exactly on an event. The expectations are
tracked from the decisions alone (an observer that knows the documented rules), not read back
from the implementation's state.

Two ways of driving time: ``decide`` alone (it applies an expired auto-resolve before the event,
silently) and "tick first" (``tick(policy, state, at_ms)`` before every event, as a caller must to
send the release notice). Properties about episode boundaries use "tick first" when the
auto-resolve is on.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.events.control import (
    MINUTE_MS,
    ControlDecision,
    ControlEvent,
    ControlState,
    MetricRule,
    Outcome,
    Policy,
    PolicyType,
    decide,
    tick,
)

N, S, R = ControlDecision.NOTIFY, ControlDecision.SUPPRESS, ControlDecision.RESOLVE
T = 5.0
HOLD_MS = MINUTE_MS

Step = tuple[int, float | None]

# Gaps: round multiples of 10 s half of the time, so a hold or an auto-resolve ends exactly on an event.
gaps = st.integers(0, 6).map(lambda k: k * 10_000) | st.integers(0, 40_000)
values = st.integers(-1, 20).map(lambda v: None if v < 0 else v / 2)
steps = st.lists(st.tuples(gaps, values), max_size=30)
present_steps = st.lists(st.tuples(gaps, st.integers(0, 20).map(lambda v: v / 2)), max_size=30)
limits = st.integers(1, 4)
auto_resolves = st.sampled_from([0.0, 1.0, 2.0])
holds = st.sampled_from([0.0, 1.0])

PROPERTY = settings(max_examples=200, deadline=None)
VARIANT = settings(max_examples=100, deadline=None)  # a second angle on a property already run at 200


def metric(limit: int = 3, hold: float = 1, auto_resolve: float = 0, mode: str = "ABSOLUTE") -> Policy:
    return Policy(PolicyType.METRIC, (MetricRule("pga", mode, T),), hold, limit, auto_resolve)


@dataclass(frozen=True)
class Decided:
    at_ms: int
    value: float | None
    before: ControlState  # the state the event was decided on (after the tick, when ticking first)
    released: Outcome | None  # the tick's outcome before this event (tick first only)
    outcome: Outcome


def run(policy: Policy, sequence: list[Step], tick_first: bool = False) -> list[Decided]:
    state, at_ms, out = ControlState(), 0, []
    for dt, value in sequence:
        at_ms += dt
        released = tick(policy, state, at_ms) if tick_first else None
        if released is not None:
            state = released.state
        event = ControlEvent(at_ms, {} if value is None else {"pga": value})
        outcome = decide(policy, state, event)
        out.append(Decided(at_ms, value, state, released, outcome))
        state = outcome.state
    return out


class Observer:
    """What the decisions say about the episode, following the documented rules."""

    def __init__(self, policy: Policy) -> None:
        self.auto_ms = int(policy.auto_resolve_minutes * MINUTE_MS)
        self.open = False
        self.peak: tuple[float, int] | None = None  # the last NOTIFY's value and time, in the open episode
        self.last_notify: int | None = None
        self.below = 0  # values below T since the last value at or above T

    def time_passes(self, at_ms: int) -> bool:
        """Apply an expired auto-resolve; True when it released the episode."""
        if self.open and self.auto_ms > 0 and self.last_notify is not None and at_ms >= self.last_notify + self.auto_ms:
            self.open, self.peak = False, None
            return True
        return False

    def see(self, at_ms: int, value: float | None, decision: ControlDecision) -> None:
        if value is not None:
            self.below = 0 if value >= T else self.below + 1
        if decision is N:
            self.open, self.peak, self.last_notify = True, (value or 0.0, at_ms), at_ms
        elif decision is R:
            self.open, self.peak = False, None


# (a) Determinism: a replay from the empty state gives the same decisions, reasons and states.


def replay(policy: Policy, sequence: list[Step], tick_first: bool) -> list[tuple[object, ...]]:
    return [
        (s.released, s.outcome.decision, s.outcome.reason, s.outcome.state) for s in run(policy, sequence, tick_first)
    ]


@PROPERTY
@given(steps, limits, holds, auto_resolves, st.booleans())
def test_a_replay_gives_identical_decisions_and_states(
    sequence: list[Step], limit: int, hold: float, auto_resolve: float, tick_first: bool
) -> None:
    policy = metric(limit, hold, auto_resolve)
    assert replay(policy, sequence, tick_first) == replay(policy, sequence, tick_first)


@VARIANT
@given(steps, st.sampled_from(["DELTA", "ABSOLUTE"]), st.booleans())
def test_a_replay_is_identical_for_delta_and_several_rules(sequence: list[Step], mode: str, tick_first: bool) -> None:
    policy = Policy(PolicyType.METRIC, (MetricRule("pga", mode, T), MetricRule("pgv", "ABSOLUTE", 3)), 1, 2, 1)

    def go() -> list[Outcome]:
        state, at_ms, out = ControlState(), 0, []
        for dt, value in sequence:
            at_ms += dt
            if tick_first and (released := tick(policy, state, at_ms)) is not None:
                state = released.state
                out.append(released)
            metrics = {} if value is None else {"pga": value, "pgv": 10 - value}
            outcome = decide(policy, state, ControlEvent(at_ms, metrics))
            state = outcome.state
            out.append(outcome)
        return out

    assert go() == go()


def test_a_decide_does_not_depend_on_earlier_calls() -> None:
    """Pure: the same (policy, state, event) always gives the same outcome, whatever ran in between."""
    policy = metric(auto_resolve=1)
    state = decide(policy, ControlState(), ControlEvent(0, {"pga": 6})).state
    first = decide(policy, state, ControlEvent(1, {"pga": 7}))
    for value in (9.0, 1.0, 1.0, 1.0):
        decide(policy, first.state, ControlEvent(2, {"pga": value}))
    assert decide(policy, state, ControlEvent(1, {"pga": 7})) == first


# (b) Peak hold: no NOTIFY for a value <= the current peak while the hold runs and the episode is open.


@PROPERTY
@given(steps, limits, holds, auto_resolves)
def test_b_no_notify_for_a_value_at_or_below_the_peak_inside_the_hold(
    sequence: list[Step], limit: int, hold: float, auto_resolve: float
) -> None:
    policy = metric(limit, hold, auto_resolve)
    hold_ms = int(hold * MINUTE_MS)
    seen = Observer(policy)
    for step in run(policy, sequence, tick_first=True):
        released = seen.time_passes(step.at_ms)
        assert (step.released is not None) is released
        decision, value = step.outcome.decision, step.value
        if seen.open and value is not None and seen.peak is not None:
            peak, peak_ms = seen.peak
            holding = hold_ms == 0 or step.at_ms - peak_ms < hold_ms
            if value <= peak and holding:
                assert decision is not N, f"NOTIFY for {value} <= peak {peak} held since {peak_ms} at {step.at_ms}"
            if value >= T and (value > peak or not holding):
                assert decision is N, f"{value} raised the peak {peak} (or the hold expired) but got {decision}"
        seen.see(step.at_ms, value, decision)


@VARIANT
@given(present_steps)
def test_b_equal_values_notify_once_per_hold(sequence: list[Step]) -> None:
    """A constant value >= T: one NOTIFY per expired hold, never two inside one."""
    policy = metric(limit=1, hold=1)
    constant: list[Step] = [(dt, 7.0) for dt, _ in sequence]
    notifies = [s.at_ms for s in run(policy, constant) if s.outcome.decision is N]
    assert all(b - a >= HOLD_MS for a, b in itertools.pairwise(notifies))
    if constant:
        assert notifies[0] == constant[0][0]


# (c) RESOLVE by count: only, and always, at exactly exit_stable_limit consecutive values below T
#     since the last value at or above T, in an open episode.


@PROPERTY
@given(steps, limits, holds, auto_resolves)
def test_c_resolve_exactly_at_exit_stable_limit(
    sequence: list[Step], limit: int, hold: float, auto_resolve: float
) -> None:
    policy = metric(limit, hold, auto_resolve)
    seen = Observer(policy)
    for step in run(policy, sequence, tick_first=True):
        seen.time_passes(step.at_ms)
        was_open = seen.open
        seen.see(step.at_ms, step.value, step.outcome.decision)
        reached = was_open and step.value is not None and step.value < T and seen.below == limit
        assert (step.outcome.decision is R) is reached, (step, seen.below, limit, was_open)
        if step.outcome.decision is R:
            assert step.before.stable_count == limit - 1


@VARIANT
@given(steps, limits, holds)
def test_c_resolve_exactly_at_exit_stable_limit_without_ticks(sequence: list[Step], limit: int, hold: float) -> None:
    policy = metric(limit, hold, auto_resolve=0)
    seen = Observer(policy)
    for step in run(policy, sequence):
        was_open = seen.open
        seen.see(step.at_ms, step.value, step.outcome.decision)
        reached = was_open and step.value is not None and step.value < T and seen.below == limit
        assert (step.outcome.decision is R) is reached


@VARIANT
@given(steps, holds)
def test_c_exit_stable_limit_zero_never_resolves_by_count(sequence: list[Step], hold: float) -> None:
    assert all(s.outcome.decision is not R for s in run(metric(0, hold), sequence))


# (d) SUPPRESS never changes episode_open.


@PROPERTY
@given(steps, limits, holds, auto_resolves, st.sampled_from(["ABSOLUTE", "DELTA"]))
def test_d_suppress_never_changes_episode_open(
    sequence: list[Step], limit: int, hold: float, auto_resolve: float, mode: str
) -> None:
    policy = metric(limit, hold, auto_resolve, mode)
    for step in run(policy, sequence, tick_first=True):
        if step.outcome.decision is S:
            assert step.outcome.state.episode_open is step.before.episode_open
            assert step.outcome.state.episode_seq == step.before.episode_seq


@VARIANT
@given(steps, limits, holds)
def test_d_suppress_never_changes_episode_open_without_auto_resolve(
    sequence: list[Step], limit: int, hold: float
) -> None:
    policy = metric(limit, hold, auto_resolve=0)
    for step in run(policy, sequence):
        if step.outcome.decision is S:
            assert step.outcome.state.episode_open is step.before.episode_open


@VARIANT
@given(steps, limits, holds, auto_resolves)
def test_d_only_notify_opens_and_only_resolve_closes(
    sequence: list[Step], limit: int, hold: float, auto_resolve: float
) -> None:
    policy = metric(limit, hold, auto_resolve)
    for step in run(policy, sequence, tick_first=True):
        before, after, decision = step.before.episode_open, step.outcome.state.episode_open, step.outcome.decision
        if not before and after:
            assert decision is N and step.outcome.state.episode_seq == step.before.episode_seq + 1
        if before and not after:
            assert decision is R
        if step.released is not None:
            assert step.released.decision is R and not step.released.state.episode_open


@PROPERTY
@given(st.lists(st.tuples(gaps, values, values), max_size=30), limits, auto_resolves)
def test_d_mixed_rules_only_an_absolute_value_at_or_above_t_opens_an_episode(
    sequence: list[tuple[int, float | None, float | None]], limit: int, auto_resolve: float
) -> None:
    """ABSOLUTE "a" and DELTA "d" (both threshold T): an episode opens only on a >= T; any NOTIFY
    resets the stable counter; SUPPRESS never opens or closes; a RESOLVE needs a below T."""
    policy = Policy(
        PolicyType.METRIC, (MetricRule("a", "ABSOLUTE", T), MetricRule("d", "DELTA", T)), 1, limit, auto_resolve
    )
    state, at_ms = ControlState(), 0
    for dt, a, d in sequence:
        at_ms += dt
        if (released := tick(policy, state, at_ms)) is not None:
            state = released.state
        metrics = {k: v for k, v in (("a", a), ("d", d)) if v is not None}
        outcome = decide(policy, state, ControlEvent(at_ms, metrics))
        before, after = state.episode_open, outcome.state.episode_open
        if not before and after:
            assert outcome.decision is N and a is not None and a >= T
        if outcome.decision is S:
            assert after is before
        if outcome.decision is N:
            assert outcome.state.stable_count == 0
        if outcome.decision is R:
            assert before and not after and a is not None and a < T
        state = outcome.state


# (e) After a RESOLVE (by count or by time), the next value at or above T notifies.


@PROPERTY
@given(steps, limits, holds, auto_resolves)
def test_e_after_resolve_the_next_value_at_or_above_t_notifies(
    sequence: list[Step], limit: int, hold: float, auto_resolve: float
) -> None:
    policy = metric(limit, hold, auto_resolve)
    after_resolve = False
    for step in run(policy, sequence, tick_first=True):
        if step.released is not None:
            after_resolve = True
        if after_resolve and step.value is not None and step.value >= T:
            assert step.outcome.decision is N
            after_resolve = False
        if step.outcome.decision is R:
            after_resolve = True


@VARIANT
@given(steps, limits, holds)
def test_e_without_an_episode_a_value_at_or_above_t_always_notifies(
    sequence: list[Step], limit: int, hold: float
) -> None:
    policy = metric(limit, hold, auto_resolve=1)
    for step in run(policy, sequence):  # decide alone: an expired episode is closed before the event
        expired = step.before.auto_resolve_at(policy)
        closed = not step.before.episode_open or (expired is not None and step.at_ms >= expired)
        if closed and step.value is not None and step.value >= T:
            assert step.outcome.decision is N


# A reference model of one ABSOLUTE rule: decisions and the whole visible state agree.


@PROPERTY
@given(steps, limits, holds, auto_resolves)
def test_absolute_matches_a_reference_model(sequence: list[Step], limit: int, hold: float, auto_resolve: float) -> None:
    policy = metric(limit, hold, auto_resolve)
    hold_ms, auto_ms = int(hold * MINUTE_MS), int(auto_resolve * MINUTE_MS)
    open_, peak, count, last_notify, seq = False, None, 0, None, 0
    for step in run(policy, sequence):
        t, v = step.at_ms, step.value
        if open_ and auto_ms and last_notify is not None and t >= last_notify + auto_ms:
            open_, peak, count = False, None, 0
        if v is None:
            expected = S
        elif v >= T:
            count = 0
            if not open_ or peak is None or v > peak[0] or (hold_ms and t - peak[1] >= hold_ms):
                expected, seq = N, seq + (0 if open_ else 1)
                open_, peak, last_notify = True, (v, t), t
            else:
                expected = S
        elif not open_:
            expected = S
        else:
            count += 1
            expected = S
            if count >= limit:
                expected, open_, peak, count = R, False, None, 0
        got = step.outcome.state
        assert step.outcome.decision is expected
        assert (got.episode_open, got.stable_count, got.episode_seq, got.last_notify_ms) == (
            open_,
            count,
            seq,
            last_notify,
        )
        assert got.peaks == (() if peak is None else (("pga", *peak),))


# DELTA: NOTIFY iff there is a previous value and |v - previous| >= T.


@PROPERTY
@given(steps)
def test_delta_notifies_iff_the_change_is_at_least_t(sequence: list[Step]) -> None:
    previous = None
    for step in run(metric(mode="DELTA", auto_resolve=1), sequence, tick_first=True):
        assert step.released is None
        v = step.value
        expected = N if v is not None and previous is not None and abs(v - previous) >= T else S
        assert step.outcome.decision is expected
        assert not step.outcome.state.episode_open
        previous = v if v is not None else previous


# (f) SET: NOTIFY iff the event has an element not among the members since the last release.

areas = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3).map(tuple)
set_steps = st.lists(st.tuples(gaps, areas), max_size=30)


@PROPERTY
@given(set_steps, auto_resolves, st.booleans())
def test_f_set_notifies_iff_a_new_element_since_the_last_release(
    sequence: list[tuple[int, tuple[str, ...]]], auto_resolve: float, tick_first: bool
) -> None:
    policy = Policy(PolicyType.SET, auto_resolve_minutes=auto_resolve)
    auto_ms = int(auto_resolve * MINUTE_MS)
    members: list[str] = []
    last_notify: int | None = None
    state, at_ms = ControlState(), 0
    for dt, event_areas in sequence:
        at_ms += dt
        due = members and auto_ms and last_notify is not None and at_ms >= last_notify + auto_ms
        if tick_first:
            released = tick(policy, state, at_ms)
            assert (released is not None) is bool(due)
            if released is not None:
                assert released.decision is R and released.state.set_members == ()
                state = released.state
        if due:
            members = []
        outcome = decide(policy, state, ControlEvent(at_ms, areas=event_areas))
        new = [a for a in dict.fromkeys(event_areas) if a not in members]
        assert (outcome.decision is N) is bool(new)
        assert outcome.decision is not R
        if new:
            members += new
            last_notify = at_ms
        assert list(outcome.state.set_members) == members
        assert outcome.state.episode_open is bool(members)
        state = outcome.state
