"""Event control, table-driven: the spec's METRIC ABSOLUTE table row by row, the SET rule, DELTA,
the choices app/domain/events/control.py documents where the spec says "not shown", and
Policy.from_profile.

Every row builds its "current situation" by driving ``decide`` from the empty state (and checks
that the situation is the one the row names), then applies the trigger and checks the decision
and the next state (episode_open, peaks, stable_count).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest

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
    end_for_policy_change,
    tick,
)

N, S, R = ControlDecision.NOTIFY, ControlDecision.SUPPRESS, ControlDecision.RESOLVE
T = 5.0
STEP_MS = 1_000
LIMIT = 3

Value = float | None


def metric(
    *, limit: int = LIMIT, hold: float = 10, auto_resolve: float = 0, mode: str = "ABSOLUTE", threshold: float = T
) -> Policy:
    return Policy(PolicyType.METRIC, (MetricRule("pga", mode, threshold),), hold, limit, auto_resolve)


def ev(at_ms: int, value: Value) -> ControlEvent:
    return ControlEvent(at_ms=at_ms, metrics={} if value is None else {"pga": value})


def drive(
    policy: Policy, values: list[Value], state: ControlState | None = None, start_ms: int = 0, step_ms: int = STEP_MS
) -> tuple[ControlState, list[ControlDecision]]:
    """Decide ``values`` (one event per ``step_ms``) from ``state`` (empty by default)."""
    state = state if state is not None else ControlState()
    decisions = []
    for i, value in enumerate(values):
        outcome = decide(policy, state, ev(start_ms + i * step_ms, value))
        state = outcome.state
        decisions.append(outcome.decision)
    return state, decisions


# --------------------------------------------------------------------------------------------
# METRIC ABSOLUTE: the spec's table, row by row.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    setup: list[Value]  # values decided from the empty state, one per STEP_MS
    setup_open: bool  # the "current situation" the setup must reach
    value: float  # the trigger: published metric value v
    decision: ControlDecision
    episode_open: bool
    peak: float | None  # the peak after the trigger (None: no peak kept)
    peak_is_trigger: bool  # the peak's time is the trigger's (True) or an earlier event's (False)
    stable_count: int
    limit: int = LIMIT


ROWS = [
    # Row 1: no active episode, v >= T -> NOTIFY, active, peak = v.
    pytest.param(Row([], False, T, N, True, T, True, 0), id="no episode, v>=T -> NOTIFY, active peak=v (empty, v=T)"),
    pytest.param(Row([], False, 9, N, True, 9, True, 0), id="no episode, v>=T -> NOTIFY, active peak=v (empty, v>T)"),
    pytest.param(
        Row([1, 4.9, 0], False, 6, N, True, 6, True, 0), id="no episode, v>=T -> NOTIFY, active peak=v (after lows)"
    ),
    pytest.param(
        Row([9, 1, 1, 1], False, 6, N, True, 6, True, 0),
        id="no episode, v>=T -> NOTIFY, active peak=v (after RESOLVE, v below the old peak)",
    ),
    # Not in the table: no active episode, v < T stays as it is.
    pytest.param(Row([], False, 4.9, S, False, None, False, 0), id="no episode, v<T -> SUPPRESS, stays inactive"),
    pytest.param(
        Row([9, 1, 1, 1], False, 1, S, False, None, False, 0),
        id="no episode, v<T -> SUPPRESS, stays inactive (after RESOLVE, no counting)",
    ),
    # Row 2: active, v >= T and v exceeds the peak -> NOTIFY, active, peak = v.
    pytest.param(Row([6], True, 7, N, True, 7, True, 0), id="active, v>=T exceeds peak -> NOTIFY"),
    pytest.param(Row([6], True, 6.01, N, True, 6.01, True, 0), id="active, v>=T exceeds peak -> NOTIFY (barely)"),
    pytest.param(
        Row([6, 7, 8], True, 9, N, True, 9, True, 0), id="active, v>=T exceeds peak -> NOTIFY (rising series)"
    ),
    pytest.param(
        Row([6, 1, 1], True, 7, N, True, 7, True, 0), id="active, v>=T exceeds peak -> NOTIFY (resets stable count)"
    ),
    # Row 3: active, v >= T and v does not exceed the peak -> SUPPRESS, active.
    pytest.param(Row([6], True, 6, S, True, 6, False, 0), id="active, v>=T not exceeding peak -> SUPPRESS (equal)"),
    pytest.param(Row([8], True, T, S, True, 8, False, 0), id="active, v>=T not exceeding peak -> SUPPRESS (v=T)"),
    pytest.param(
        Row([6, 8, 7], True, 7.5, S, True, 8, False, 0),
        id="active, v>=T not exceeding peak -> SUPPRESS (below a raised peak)",
    ),
    # Row 4: active, v < T, the count still below exit_stable_limit -> SUPPRESS, count + 1.
    pytest.param(Row([6], True, 1, S, True, 6, False, 1), id="active, v<T count below limit -> SUPPRESS count+1 (1)"),
    pytest.param(
        Row([6, 1], True, 4.99, S, True, 6, False, 2), id="active, v<T count below limit -> SUPPRESS count+1 (2)"
    ),
    pytest.param(
        Row([6, None, 1, None], True, 0, S, True, 6, False, 2),
        id="active, v<T count below limit -> SUPPRESS count+1 (events without the metric do not count)",
    ),
    # Row 5: active, v < T and the count reaches exit_stable_limit -> RESOLVE, episode ended.
    pytest.param(Row([6, 1, 1], True, 1, R, False, None, False, 0), id="active, v<T count reaches limit -> RESOLVE"),
    pytest.param(
        Row([6], True, 0, R, False, None, False, 0, limit=1), id="active, v<T count reaches limit -> RESOLVE (limit 1)"
    ),
    pytest.param(
        Row([6, 9, 1, 1], True, 4.9, R, False, None, False, 0),
        id="active, v<T count reaches limit -> RESOLVE (after a raised peak)",
    ),
    # exit_stable_limit 0: the count never reaches a limit (only time or nothing ends the episode).
    pytest.param(
        Row([6, 1, 1, 1, 1], True, 1, S, True, 6, False, 5, limit=0),
        id="active, v<T exit_stable_limit 0 -> SUPPRESS, never RESOLVE",
    ),
]


@pytest.mark.parametrize("row", ROWS)
def test_metric_absolute_table(row: Row) -> None:
    policy = metric(limit=row.limit)
    before, _ = drive(policy, row.setup)
    assert before.episode_open is row.setup_open, "the setup did not reach the row's current situation"
    trigger_ms = len(row.setup) * STEP_MS
    outcome = decide(policy, before, ev(trigger_ms, row.value))
    assert outcome.decision is row.decision, outcome.reason
    after = outcome.state
    assert after.episode_open is row.episode_open
    assert after.stable_count == row.stable_count
    if row.peak is None:
        assert after.peaks == ()
    else:
        ((name, peak, at_ms),) = after.peaks
        assert (name, peak) == ("pga", row.peak)
        if row.peak_is_trigger:
            assert at_ms == trigger_ms
        else:
            assert at_ms < trigger_ms and (name, peak, at_ms) in before.peaks
    assert after.last_decision == row.decision.value
    if row.decision is N:
        assert after.last_notify_ms == trigger_ms
    else:
        assert after.last_notify_ms == before.last_notify_ms


def test_metric_absolute_episode_seq_counts_episodes() -> None:
    policy = metric(limit=1)
    state, decisions = drive(policy, [6, 7, 0, 1, 6, 0])
    assert decisions == [N, N, R, S, N, R]
    assert state.episode_seq == 2 and not state.episode_open


def test_metric_absolute_full_table_walk() -> None:
    """All five event rows in one episode, then a second episode."""
    state, decisions = drive(metric(), [1, 6, 7, 7, 6.5, 2, 3, 8, 1, 1, 1, 5])
    assert decisions == [S, N, N, S, S, S, S, N, S, S, R, N]
    assert state.episode_open and state.peaks == (("pga", 5, 11 * STEP_MS),) and state.episode_seq == 2


# Row 6: active, time: auto_resolve_duration minutes elapsed (0 disables) -> automatic release.
@pytest.mark.parametrize(
    ("auto_resolve", "setup", "elapsed_ms", "released"),
    [
        pytest.param(2, [6], 2 * MINUTE_MS - 1, False, id="active, time auto_resolve elapsed -> not yet (1 ms before)"),
        pytest.param(2, [6], 2 * MINUTE_MS, True, id="active, time auto_resolve elapsed -> RESOLVE via tick (at due)"),
        pytest.param(2, [6], 10 * MINUTE_MS, True, id="active, time auto_resolve elapsed -> RESOLVE via tick (late)"),
        pytest.param(
            2,
            [6, 1, 1],
            2 * MINUTE_MS,
            True,
            id="active, time auto_resolve elapsed -> RESOLVE via tick (while counting)",
        ),
        pytest.param(0.5, [6], 30_000, True, id="active, time auto_resolve elapsed -> RESOLVE via tick (fractional)"),
        pytest.param(0, [6], 10**12, False, id="active, time auto_resolve elapsed -> 0 disables"),
        pytest.param(2, [], 10**12, False, id="no episode, time -> nothing to release"),
        pytest.param(2, [6, 1, 1, 1], 10**12, False, id="episode ended by count, time -> nothing to release"),
    ],
)
def test_metric_absolute_table_auto_resolve_by_tick(
    auto_resolve: float, setup: list[Value], elapsed_ms: int, released: bool
) -> None:
    policy = metric(auto_resolve=auto_resolve)
    before, _ = drive(policy, setup)
    now_ms = (before.last_notify_ms or 0) + elapsed_ms
    outcome = tick(policy, before, now_ms)
    if not released:
        assert outcome is None
        return
    assert outcome is not None
    assert outcome.decision is R
    assert not outcome.state.episode_open and outcome.state.peaks == () and outcome.state.stable_count == 0
    assert outcome.state.last_decision == R.value
    assert tick(policy, outcome.state, now_ms + 10**9) is None  # released once
    # After the release the next value >= T opens a new episode, even one below the old peak.
    again = decide(policy, outcome.state, ev(now_ms + 1, T))
    assert again.decision is N and again.state.episode_open and again.state.episode_seq == before.episode_seq + 1


def test_auto_resolve_counts_from_the_last_notify_not_from_the_episode_start() -> None:
    policy = metric(auto_resolve=2)
    state, decisions = drive(policy, [6, 7, 7], step_ms=MINUTE_MS)  # NOTIFY at 0 and 1 min, SUPPRESS at 2 min
    assert decisions == [N, N, S]
    assert state.auto_resolve_at(policy) == 3 * MINUTE_MS
    assert tick(policy, state, 3 * MINUTE_MS - 1) is None
    released = tick(policy, state, 3 * MINUTE_MS)
    assert released is not None and released.decision is R


def test_auto_resolve_at_is_none_without_an_open_episode_or_when_disabled() -> None:
    assert ControlState().auto_resolve_at(metric(auto_resolve=2)) is None
    open_state, _ = drive(metric(), [6])
    assert open_state.auto_resolve_at(metric(auto_resolve=0)) is None
    assert open_state.auto_resolve_at(metric(auto_resolve=2)) == 2 * MINUTE_MS


def test_decide_after_the_due_time_starts_from_the_released_state() -> None:
    """decide applies an expired auto-resolve before the event (documented): a value that does not
    exceed the old peak opens a new episode and notifies."""
    policy = metric(auto_resolve=1)
    state, _ = drive(policy, [9])
    outcome = decide(policy, state, ev(MINUTE_MS, 6))
    assert outcome.decision is N and outcome.state.peaks == (("pga", 6, MINUTE_MS),)
    assert outcome.state.episode_seq == 2


def test_decide_after_the_due_time_alone_returns_no_release_notice() -> None:
    """Contract: an Outcome carries one decision, so a caller that does not tick before deciding
    gets no RESOLVE for an episode that time ended (here: SUPPRESS, and the episode is closed).
    tick(policy, state, event.at_ms) first gives the RESOLVE, and then the same decision."""
    policy = metric(auto_resolve=1)
    state, _ = drive(policy, [9])
    alone = decide(policy, state, ev(MINUTE_MS, 1))
    assert alone.decision is S and not alone.state.episode_open
    released = tick(policy, state, MINUTE_MS)
    assert released is not None and released.decision is R
    after = decide(policy, released.state, ev(MINUTE_MS, 1))
    assert after.decision is S and after.state == alone.state


# --------------------------------------------------------------------------------------------
# SET.
# --------------------------------------------------------------------------------------------


def set_policy(auto_resolve: float = 5) -> Policy:
    return Policy(PolicyType.SET, auto_resolve_minutes=auto_resolve)


def drive_set(policy: Policy, events: list[tuple[str, ...]], step_ms: int = STEP_MS) -> tuple[ControlState, list[Any]]:
    state, decisions = ControlState(), []
    for i, areas in enumerate(events):
        outcome = decide(policy, state, ControlEvent(i * step_ms, areas=areas))
        state = outcome.state
        decisions.append(outcome.decision)
    return state, decisions


@pytest.mark.parametrize(
    ("setup", "areas", "decision", "members"),
    [
        pytest.param([], ("kanto",), N, ("kanto",), id="set, new element (empty set) -> NOTIFY and joins"),
        pytest.param([("kanto",)], ("tohoku",), N, ("kanto", "tohoku"), id="set, new element -> NOTIFY and joins"),
        pytest.param([("kanto",)], ("kanto",), S, ("kanto",), id="set, known element -> SUPPRESS"),
        pytest.param(
            [("kanto", "tohoku")], ("tohoku", "kanto"), S, ("kanto", "tohoku"), id="set, known elements -> SUPPRESS"
        ),
        pytest.param(
            [("kanto",)], ("kanto", "tohoku"), N, ("kanto", "tohoku"), id="set, mix of new+known -> NOTIFY, new joins"
        ),
        pytest.param(
            [],
            ("kanto", "kanto", "tohoku", "kanto"),
            N,
            ("kanto", "tohoku"),
            id="set, duplicates in one event join once, in order",
        ),
        pytest.param([("kanto",)], (), S, ("kanto",), id="set, no areas -> SUPPRESS"),
        pytest.param([], (), S, (), id="set, no areas on empty set -> SUPPRESS, no episode"),
        pytest.param([("a",), ("b",), ("c",)], ("b",), S, ("a", "b", "c"), id="set, element known from earlier"),
    ],
)
def test_set_rule(
    setup: list[tuple[str, ...]], areas: tuple[str, ...], decision: ControlDecision, members: Any
) -> None:
    policy = set_policy()
    before, _ = drive_set(policy, setup)
    outcome = decide(policy, before, ControlEvent(len(setup) * STEP_MS, areas=areas))
    assert outcome.decision is decision, outcome.reason
    assert outcome.state.set_members == members
    assert outcome.state.episode_open is bool(members)
    assert outcome.state.episode_seq == (1 if members else 0)


def test_set_ignores_metrics_and_the_metric_fields() -> None:
    policy = Policy(PolicyType.SET, (MetricRule("pga", "ABSOLUTE", T),), 10, 1, 0)
    state, decisions = drive_set(policy, [("a",)])
    outcome = decide(policy, state, ControlEvent(STEP_MS, metrics={"pga": 100}, areas=("a",)))
    assert decisions == [N] and outcome.decision is S and outcome.state.peaks == ()


def test_set_auto_resolve_releases_the_set_via_tick() -> None:
    policy = set_policy(auto_resolve=5)
    state, decisions = drive_set(policy, [("kanto",), ("kanto", "tohoku"), ("kanto",)])
    assert decisions == [N, N, S]
    due = 1 * STEP_MS + 5 * MINUTE_MS  # from the last NOTIFY, not from the SUPPRESS
    assert state.auto_resolve_at(policy) == due
    assert tick(policy, state, due - 1) is None
    released = tick(policy, state, due)
    assert released is not None and released.decision is R
    assert released.state.set_members == () and not released.state.episode_open
    assert tick(policy, released.state, due + 10**9) is None
    # Released: a known element notifies again and starts a new episode.
    again = decide(policy, released.state, ControlEvent(due + 1, areas=("kanto",)))
    assert again.decision is N and again.state.set_members == ("kanto",) and again.state.episode_seq == 2


def test_set_auto_resolve_zero_never_releases() -> None:
    policy = set_policy(auto_resolve=0)
    state, _ = drive_set(policy, [("kanto",)])
    assert tick(policy, state, 10**12) is None
    assert decide(policy, state, ControlEvent(10**12, areas=("kanto",))).decision is S


def test_set_decide_after_the_due_time_starts_from_a_released_set() -> None:
    policy = set_policy(auto_resolve=1)
    state, _ = drive_set(policy, [("kanto",)])
    outcome = decide(policy, state, ControlEvent(MINUTE_MS, areas=("kanto",)))
    assert outcome.decision is N and outcome.state.set_members == ("kanto",) and outcome.state.episode_seq == 2


# --------------------------------------------------------------------------------------------
# DELTA.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "value", "decision"),
    [
        pytest.param([], 10, S, id="delta, first value -> SUPPRESS (recorded)"),
        pytest.param([], 100, S, id="delta, first value even huge -> SUPPRESS"),
        pytest.param([10], 15, N, id="delta, |change| = T up -> NOTIFY"),
        pytest.param([10], 5, N, id="delta, |change| = T down -> NOTIFY"),
        pytest.param([10], 30, N, id="delta, |change| > T up -> NOTIFY"),
        pytest.param([10], -1, N, id="delta, |change| > T down -> NOTIFY"),
        pytest.param([10], 14.9, S, id="delta, smaller change up -> SUPPRESS"),
        pytest.param([10], 5.1, S, id="delta, smaller change down -> SUPPRESS"),
        pytest.param([10], 10, S, id="delta, no change -> SUPPRESS"),
        pytest.param([10, 13], 16, S, id="delta, change from the previous value, not from the first -> SUPPRESS"),
        pytest.param([10, 20], 24, S, id="delta, change from the previous value after a NOTIFY -> SUPPRESS"),
        pytest.param([10, None], 15, N, id="delta, event without the metric keeps the previous value"),
    ],
)
def test_delta_rule(setup: list[Value], value: float, decision: ControlDecision) -> None:
    policy = metric(mode="DELTA")
    before, _ = drive(policy, setup)
    outcome = decide(policy, before, ev(len(setup) * STEP_MS, value))
    assert outcome.decision is decision, outcome.reason
    assert dict(outcome.state.last_values)["pga"] == value
    # DELTA alone keeps no peak and never opens an episode (so nothing to count or release).
    assert not outcome.state.episode_open and outcome.state.peaks == () and outcome.state.stable_count == 0


def test_delta_never_resolves_and_never_auto_resolves() -> None:
    policy = metric(mode="DELTA", limit=1, auto_resolve=1)
    state, decisions = drive(policy, [0, 10, 0, 0, 0, 20])
    assert decisions == [S, N, N, S, S, N]
    assert state.episode_seq == 0 and tick(policy, state, 10**12) is None


# --------------------------------------------------------------------------------------------
# The documented choices where the spec says "not shown".
# --------------------------------------------------------------------------------------------


def test_counter_resets_when_a_value_returns_at_or_above_t() -> None:
    policy = metric(limit=3)
    state, decisions = drive(policy, [6, 1, 1])
    assert decisions == [N, S, S] and state.stable_count == 2
    back = decide(policy, state, ev(3 * STEP_MS, T))  # equal to T, not a new peak
    assert back.decision is S and back.state.stable_count == 0 and back.state.episode_open
    state, decisions = drive(policy, [1, 1, 1], state=back.state, start_ms=4 * STEP_MS)
    assert decisions == [S, S, R]


def test_counter_reset_by_a_new_peak_too() -> None:
    state, decisions = drive(metric(limit=3), [6, 1, 1, 7, 1, 1, 1])
    assert decisions == [N, S, S, N, S, S, R]
    assert not state.episode_open


def two_rules(limit: int = 2, hold: float = 10) -> Policy:
    return Policy(PolicyType.METRIC, (MetricRule("a", "ABSOLUTE", 1), MetricRule("b", "ABSOLUTE", 10)), hold, limit)


def drive_many(policy: Policy, events: list[dict[str, float]]) -> tuple[ControlState, list[ControlDecision]]:
    state, decisions = ControlState(), []
    for i, metrics in enumerate(events):
        outcome = decide(policy, state, ControlEvent(i * STEP_MS, metrics))
        state = outcome.state
        decisions.append(outcome.decision)
    return state, decisions


@pytest.mark.parametrize(
    ("events", "decisions", "episode_open", "stable_count"),
    [
        pytest.param([{"a": 2, "b": 0}], [N], True, 0, id="several rules, one above -> NOTIFY"),
        pytest.param([{"a": 2, "b": 11}], [N], True, 0, id="several rules, both above -> NOTIFY (one notice)"),
        pytest.param(
            [{"a": 2, "b": 0}, {"a": 2, "b": 11}], [N, N], True, 0, id="several rules, other rule raises -> NOTIFY"
        ),
        pytest.param(
            [{"a": 2, "b": 11}, {"a": 2, "b": 11}], [N, S], True, 0, id="several rules, no rule raises -> SUPPRESS"
        ),
        pytest.param(
            [{"a": 2}, {"a": 0, "b": 11}, {"a": 0, "b": 11}], [N, N, S], True, 0, id="several rules, peaks per rule"
        ),
        pytest.param([{"a": 2}, {"a": 0, "b": 0}], [N, S], True, 1, id="several rules, all present below -> counts"),
        pytest.param(
            [{"a": 2}, {"a": 0, "b": 0}, {"a": 2, "b": 0}],
            [N, S, S],
            True,
            0,
            id="several rules, any present at or above -> counter reset",
        ),
        pytest.param(
            [{"a": 2}, {"a": 0}, {"b": 0}], [N, S, R], False, 0, id="several rules, only present rules count (b alone)"
        ),
        pytest.param(
            [{"a": 2}, {"a": 0}, {"b": 10}],
            [N, S, N],
            True,
            0,
            id="several rules, absent rule does not block, present one at T -> NOTIFY",
        ),
        pytest.param(
            [{"a": 2}, {"x": 100}, {"x": 100}], [N, S, S], True, 0, id="several rules, none present -> nothing changes"
        ),
    ],
)
def test_several_rules(
    events: list[dict[str, float]], decisions: list[ControlDecision], episode_open: bool, stable_count: int
) -> None:
    state, got = drive_many(two_rules(), events)
    assert got == decisions
    assert state.episode_open is episode_open and state.stable_count == stable_count


def test_several_rules_keep_one_peak_per_rule() -> None:
    state, _ = drive_many(two_rules(), [{"a": 2, "b": 11}, {"a": 3, "b": 10.5}])
    assert state.peaks == (("a", 3, STEP_MS), ("b", 11, 0))


@pytest.mark.parametrize(
    "policy",
    [
        pytest.param(metric(), id="metric missing, open episode"),
        pytest.param(two_rules(), id="several rules, none present"),
        pytest.param(metric(mode="DELTA"), id="delta metric missing"),
    ],
)
def test_metric_missing_from_the_event_suppresses_and_leaves_the_state(policy: Policy) -> None:
    name = policy.rules[0].metric_name
    before = decide(policy, ControlState(), ControlEvent(0, {name: 8})).state
    before = decide(policy, before, ControlEvent(1, {name: 0.5})).state  # some count / last value to keep
    for metrics in ({}, {"other": 100.0}):
        outcome = decide(policy, before, ControlEvent(2, metrics))
        assert outcome.decision is S
        # Nothing but the bookkeeping of the last decision changes.
        assert outcome.state == replace(before, last_decision=S.value)


@pytest.mark.parametrize(
    ("after_ms", "value", "decision", "peak"),
    [
        pytest.param(MINUTE_MS - 1, 6, S, (6, 0), id="peak hold, equal value inside the hold -> SUPPRESS"),
        pytest.param(MINUTE_MS, 6, N, (6, MINUTE_MS), id="peak hold expiry -> equal value notifies again (at expiry)"),
        pytest.param(5 * MINUTE_MS, 6, N, (6, 5 * MINUTE_MS), id="peak hold expiry -> equal value notifies again"),
        pytest.param(
            5 * MINUTE_MS, T, N, (T, 5 * MINUTE_MS), id="peak hold expiry -> lower value >= T notifies, new peak"
        ),
        pytest.param(MINUTE_MS - 1, T, S, (6, 0), id="peak hold, lower value inside the hold -> SUPPRESS"),
        pytest.param(5 * MINUTE_MS, 4, S, (6, 0), id="peak hold expiry, value < T -> SUPPRESS, peak kept"),
        pytest.param(MINUTE_MS - 1, 7, N, (7, MINUTE_MS - 1), id="peak hold, higher value -> NOTIFY anyway"),
    ],
)
def test_peak_hold(after_ms: int, value: float, decision: ControlDecision, peak: tuple[float, int]) -> None:
    policy = metric(hold=1)
    before = decide(policy, ControlState(), ev(0, 6)).state
    outcome = decide(policy, before, ev(after_ms, value))
    assert outcome.decision is decision, outcome.reason
    assert outcome.state.peaks == (("pga", *peak),)
    assert outcome.state.episode_open


def test_peak_hold_counts_from_the_peak_not_from_later_equal_values() -> None:
    policy = metric(hold=1)
    _, decisions = drive(policy, [6, 6, 6, 6], step_ms=30_000)
    assert decisions == [N, S, N, S]


def test_peak_hold_zero_holds_the_peak_for_the_whole_episode() -> None:
    """Undocumented choice: peak_hold_duration 0 never expires (the spec table's behaviour)."""
    _, decisions = drive(metric(hold=0), [6, 6, 6], step_ms=10**9)
    assert decisions == [N, S, S]


def test_inactive_policy_behaves_as_bypass() -> None:
    profile = {
        "type": "METRIC",
        "status": "INACTIVE",
        "rules": [{"metric_name": "pga", "mode": "ABSOLUTE", "threshold": 5}],
        "exit_stable_limit": 1,
    }
    policy = Policy.from_profile(profile)
    assert policy == Policy() and policy.type is PolicyType.BYPASS
    state = ControlState()
    for i, value in enumerate([6, 6, 1, None, 100]):
        outcome = decide(policy, state, ev(i, value))
        assert outcome.decision is N and outcome.reason == "bypass"
        assert outcome.state is state  # BYPASS keeps no state


def test_bypass_notifies_every_event_even_with_areas() -> None:
    outcome = decide(Policy(), ControlState(), ControlEvent(0, {}, ("a",)))
    assert outcome.decision is N and outcome.state == ControlState()


@pytest.mark.parametrize(
    ("old", "old_event", "new", "new_event", "decision"),
    [
        pytest.param(
            set_policy(), ControlEvent(0, areas=("a",)), metric(), ev(1, 1), S, id="type change SET -> METRIC"
        ),
        pytest.param(
            metric(), ev(0, 9), set_policy(), ControlEvent(1, areas=("a",)), N, id="type change METRIC -> SET"
        ),
        pytest.param(
            metric(), ev(0, 9), metric(mode="DELTA"), ev(1, 6), S, id="mode change keeps the METRIC state (not a type)"
        ),
    ],
)
def test_policy_type_change_starts_from_empty_state(
    old: Policy, old_event: ControlEvent, new: Policy, new_event: ControlEvent, decision: ControlDecision
) -> None:
    old_state = decide(old, ControlState(), old_event).state
    assert old_state.episode_open
    outcome = decide(new, old_state, new_event)
    assert outcome.decision is decision
    if old.type is new.type:
        assert outcome.state.episode_seq == old_state.episode_seq
        return
    # The empty state, but for the episode count: a later episode never reuses an earlier one's id.
    fresh = decide(new, ControlState(episode_seq=old_state.episode_seq), new_event)
    assert outcome == fresh, "a state of another policy type must give what the empty state gives"
    assert outcome.state.policy_type == new.type.value
    assert outcome.state.episode_seq == old_state.episode_seq + (1 if outcome.state.episode_open else 0)


def test_metric_after_set_notifies_a_value_below_the_old_metric_peak() -> None:
    """METRIC -> SET -> METRIC: the second METRIC period starts from the empty state."""
    state = decide(metric(), ControlState(), ev(0, 9)).state
    state = decide(set_policy(), state, ControlEvent(1, areas=("a",))).state
    outcome = decide(metric(), state, ev(2, 6))
    assert outcome.decision is N and outcome.state.peaks == (("pga", 6, 2),) and outcome.state.set_members == ()


def test_inactive_is_a_pause_the_state_resumes_when_active_again() -> None:
    """INACTIVE leaves the state as it was: made ACTIVE again, the episode and its peak resume."""
    active = metric(hold=0)
    paused = Policy.from_profile({"type": "METRIC", "status": "INACTIVE"})
    state = decide(active, ControlState(), ev(0, 9)).state  # episode open, peak 9
    during = decide(paused, state, ev(1, 9))
    assert during.decision is N and during.state == state
    assert tick(paused, state, 10**12) is None  # no auto-resolve while paused
    outcome = decide(active, during.state, ev(2, 6))
    assert outcome.decision is S and outcome.state.peaks == (("pga", 9, 0),) and outcome.state.episode_seq == 1


def test_inactive_pause_an_episode_whose_auto_resolve_passed_is_released_first() -> None:
    active = metric(hold=0, auto_resolve=1)
    paused = Policy.from_profile({"type": "METRIC", "status": "INACTIVE"})
    state = decide(active, ControlState(), ev(0, 9)).state
    state = decide(paused, state, ev(1, 9)).state
    released = tick(active, state, 5 * MINUTE_MS)  # made ACTIVE again long after the due time
    assert released is not None and released.decision is R and not released.state.episode_open
    outcome = decide(active, state, ev(5 * MINUTE_MS, 6))  # decide alone: released, then a new episode
    assert outcome.decision is N and outcome.state.peaks == (("pga", 6, 5 * MINUTE_MS),)
    assert outcome.state.episode_seq == 2


def mixed(limit: int = 2) -> Policy:
    return Policy(PolicyType.METRIC, (MetricRule("a", "ABSOLUTE", 5), MetricRule("d", "DELTA", 3)), 10, limit)


def test_delta_change_with_absolute_values_below_t_is_a_single_event_not_an_episode() -> None:
    """Only a value at or above an ABSOLUTE threshold opens an episode (fixed in b165947: a DELTA
    change used to open one, and the low values after it produced a RESOLVE)."""
    state, decisions = drive_many(mixed(), [{"a": 1, "d": 0}, {"a": 1, "d": 10}, {"a": 1, "d": 10}, {"a": 1, "d": 10}])
    assert decisions == [S, N, S, S]
    assert not state.episode_open and state.episode_seq == 0 and state.stable_count == 0


def test_delta_change_inside_an_episode_is_a_step_of_it_and_resets_the_counter() -> None:
    events: list[dict[str, float]] = [
        {"a": 6, "d": 0},
        {"a": 1, "d": 0},
        {"a": 1, "d": 10},
        {"a": 1, "d": 10},
        {"a": 1, "d": 10},
    ]
    state, decisions = drive_many(mixed(), events)
    assert decisions == [N, S, N, S, R]
    assert not state.episode_open and state.episode_seq == 1


def test_delta_change_with_an_absolute_value_at_t_opens_one_episode() -> None:
    state, decisions = drive_many(mixed(), [{"a": 1, "d": 0}, {"a": 5, "d": 10}])
    assert decisions == [S, N]
    assert state.episode_open and state.episode_seq == 1 and state.peaks == (("a", 5, STEP_MS),)


def test_tick_on_a_state_of_another_policy_type_does_nothing() -> None:
    """tick applies the type-change rule too (fixed in b165947: it released the old type's episode)."""
    set_state = decide(set_policy(auto_resolve=1), ControlState(), ControlEvent(0, areas=("a",))).state
    new_policy = metric(auto_resolve=1)
    assert not decide(new_policy, set_state, ev(MINUTE_MS - 1, None)).state.episode_open  # decide: empty state
    assert tick(new_policy, set_state, MINUTE_MS) is None
    metric_state = decide(metric(auto_resolve=1), ControlState(), ev(0, 9)).state
    assert tick(set_policy(auto_resolve=1), metric_state, MINUTE_MS) is None


# --------------------------------------------------------------------------------------------
# Policy.from_profile.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        pytest.param(None, Policy(), id="none -> BYPASS"),
        pytest.param({}, Policy(), id="empty -> BYPASS"),
        pytest.param({"type": "BYPASS"}, Policy(), id="BYPASS"),
        pytest.param({"status": "ACTIVE"}, Policy(), id="no type -> BYPASS"),
        pytest.param({"type": "SET", "status": "INACTIVE"}, Policy(), id="INACTIVE SET -> BYPASS"),
        pytest.param({"type": "METRIC", "status": "active"}, Policy(), id="status not exactly ACTIVE -> BYPASS"),
        pytest.param(
            {
                "type": "METRIC",
                "status": "ACTIVE",
                "rules": [
                    {"metric_name": "pga", "mode": "ABSOLUTE", "threshold": 5},
                    {"metric_name": "si", "mode": "DELTA", "threshold": 0.5},
                ],
                "peak_hold_duration": 10,
                "exit_stable_limit": 3,
                "auto_resolve_duration": 60,
            },
            Policy(
                PolicyType.METRIC,
                (MetricRule("pga", "ABSOLUTE", 5.0), MetricRule("si", "DELTA", 0.5)),
                10.0,
                3,
                60.0,
            ),
            id="full METRIC",
        ),
        pytest.param(
            {"type": "METRIC", "rules": [{"metric_name": "pga", "threshold": "5"}]},
            Policy(PolicyType.METRIC, (MetricRule("pga", "ABSOLUTE", 5.0),)),
            id="METRIC defaults: status ACTIVE, mode ABSOLUTE, durations 0",
        ),
        pytest.param(
            {
                "type": "METRIC",
                "rules": None,
                "peak_hold_duration": None,
                "exit_stable_limit": None,
                "auto_resolve_duration": None,
            },
            Policy(PolicyType.METRIC),
            id="METRIC nulls -> no rules, zeros",
        ),
        pytest.param(
            {"type": "SET", "status": "ACTIVE", "auto_resolve_duration": 1.5},
            Policy(PolicyType.SET, auto_resolve_minutes=1.5),
            id="SET with auto_resolve",
        ),
    ],
)
def test_policy_from_profile(profile: dict[str, Any] | None, expected: Policy) -> None:
    policy = Policy.from_profile(profile)
    assert policy == expected
    assert isinstance(policy.type, PolicyType)
    assert all(isinstance(r.threshold, float) for r in policy.rules)


def test_policy_from_profile_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="NOPE"):
        Policy.from_profile({"type": "NOPE"})


def test_policy_from_profile_drives_decide() -> None:
    profile = {
        "type": "METRIC",
        "rules": [{"metric_name": "pga", "mode": "ABSOLUTE", "threshold": 5}],
        "peak_hold_duration": 10,
        "exit_stable_limit": 2,
        "auto_resolve_duration": 0,
    }
    policy = Policy.from_profile(profile)
    _, decisions = drive(policy, [4, 5, 5, 6, 1, 1, 5])
    assert decisions == [S, N, S, N, S, R, N]


def test_outcome_is_the_documented_triple() -> None:
    outcome = decide(metric(), ControlState(), ev(0, 6))
    assert isinstance(outcome, Outcome)
    assert outcome.state.policy_type == PolicyType.METRIC.value and outcome.reason


@pytest.mark.parametrize(
    ("old", "old_event", "new"),
    [
        pytest.param(metric(), ev(0, 9), set_policy(), id="METRIC -> SET"),
        pytest.param(set_policy(), ControlEvent(0, areas=("a",)), metric(), id="SET -> METRIC"),
    ],
)
def test_a_policy_type_change_ends_the_open_episode_with_policy_changed(
    old: Policy, old_event: ControlEvent, new: Policy
) -> None:
    """Issue 14, defect 9: the open episode of the old type is released (RESOLVE, reason
    policy_changed) before anything is decided under the new type; its episode count is kept."""
    state = decide(old, ControlState(), old_event).state
    ended = end_for_policy_change(new, state)
    assert ended is not None and ended.decision is R and ended.reason.startswith("policy_changed")
    assert not ended.state.episode_open and ended.state.policy_type == new.type.value
    assert ended.state.episode_seq == state.episode_seq and ended.state.last_decision is R
    assert end_for_policy_change(new, ended.state) is None  # ended once
    assert end_for_policy_change(old, state) is None  # same type: nothing to end
    closed = ControlState(policy_type=old.type.value, episode_seq=3)
    assert end_for_policy_change(new, closed) is None  # no open episode
    # BYPASS (or INACTIVE, which decides as BYPASS and is a pause) ends nothing here.
    assert end_for_policy_change(Policy(), state) is None


def test_an_episode_older_than_the_last_type_change_ends_even_when_the_type_is_back() -> None:
    """METRIC → BYPASS → METRIC: the worker never saw BYPASS (BYPASS events read no state), so the
    state is METRIC again; its episode opened before the change ended with it all the same."""
    state = decide(metric(), ControlState(), ev(0, 9)).state
    back = Policy.from_profile(
        {"type": "METRIC", "rules": [{"metric_name": "pga", "threshold": T}]}, type_changed_ms=STEP_MS
    )
    ended = end_for_policy_change(back, state)
    assert ended is not None and ended.decision is R and ended.reason.startswith("policy_changed")
    assert not ended.state.episode_open and ended.state.peaks == () and ended.state.episode_seq == 1
    newer = decide(back, ended.state, ev(2 * STEP_MS, 9)).state  # a new episode, after the change
    assert newer.episode_open and end_for_policy_change(back, newer) is None
