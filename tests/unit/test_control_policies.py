"""Event-control policies as pure state machines: the spec's METRIC table row by row, SET,
DELTA, auto-resolve, and invariants over random sequences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.events.control import (
    MINUTE_MS,
    ControlDecision,
    ControlEvent,
    ControlState,
    MetricRule,
    Policy,
    PolicyType,
    decide,
    tick,
)

N, S, R = ControlDecision.NOTIFY, ControlDecision.SUPPRESS, ControlDecision.RESOLVE
T = 5.0


def metric(
    exit_stable_limit: int = 3, peak_hold: float = 10, auto_resolve: float = 0, mode: str = "ABSOLUTE"
) -> Policy:
    return Policy(PolicyType.METRIC, (MetricRule("pga", mode, T),), peak_hold, exit_stable_limit, auto_resolve)


def run(policy: Policy, values: list[float | None], step_ms: int = 1000) -> list[ControlDecision]:
    state, out = ControlState(), []
    for i, value in enumerate(values):
        event = ControlEvent(at_ms=i * step_ms, metrics={} if value is None else {"pga": value})
        outcome = decide(policy, state, event)
        state, _ = outcome.state, out.append(outcome.decision)
    return out


# The spec's METRIC ABSOLUTE table, one test per row.
def test_metric_absolute_first_value_at_threshold_notifies_and_opens_an_episode() -> None:
    outcome = decide(metric(), ControlState(), ControlEvent(0, {"pga": T}))
    assert outcome.decision is N and outcome.state.episode_open and outcome.state.peaks[0][1] == T


def test_metric_absolute_first_value_below_threshold_is_suppressed_without_episode() -> None:
    outcome = decide(metric(), ControlState(), ControlEvent(0, {"pga": T - 0.1}))
    assert outcome.decision is S and not outcome.state.episode_open


def test_metric_absolute_value_exceeding_the_peak_notifies_and_raises_the_peak() -> None:
    assert run(metric(), [6, 7]) == [N, N]


def test_metric_absolute_equal_value_within_peak_hold_is_suppressed() -> None:
    assert run(metric(), [6, 6, 5.5]) == [N, S, S]


def test_metric_absolute_below_values_count_until_exit_stable_limit_then_resolve() -> None:
    assert run(metric(exit_stable_limit=3), [6, 1, 1, 1]) == [N, S, S, R]


def test_metric_absolute_auto_resolve_releases_the_episode_by_time() -> None:
    policy = metric(exit_stable_limit=0, auto_resolve=2)
    state = decide(policy, ControlState(), ControlEvent(0, {"pga": 6})).state
    assert tick(policy, state, 2 * MINUTE_MS - 1) is None
    released = tick(policy, state, 2 * MINUTE_MS)
    assert released is not None and released.decision is R and not released.state.episode_open


def test_auto_resolve_zero_disables_it() -> None:
    state = decide(metric(auto_resolve=0), ControlState(), ControlEvent(0, {"pga": 6})).state
    assert tick(metric(auto_resolve=0), state, 10**12) is None


# Choices where the spec says "not shown".
def test_value_back_above_threshold_resets_the_stable_counter() -> None:
    assert run(metric(exit_stable_limit=2), [6, 1, 5, 1, 1]) == [N, S, S, S, R]


def test_peak_hold_expiry_lets_an_equal_value_notify_again() -> None:
    policy = metric(peak_hold=1)
    assert run(policy, [6, 6, 6], step_ms=40_000) == [N, S, N]


def test_event_without_the_policys_metric_changes_nothing() -> None:
    assert run(metric(exit_stable_limit=1), [6, None, 1]) == [N, S, R]


def test_delta_first_value_only_records_and_changes_of_at_least_t_notify() -> None:
    assert run(metric(mode="DELTA"), [10, 12, 17, 12, 12.5]) == [S, S, N, N, S]


def test_several_rules_notify_when_any_raises_its_peak() -> None:
    policy = Policy(PolicyType.METRIC, (MetricRule("a", "ABSOLUTE", 1), MetricRule("b", "ABSOLUTE", 10)), 10, 2)
    s0 = ControlState()
    o1 = decide(policy, s0, ControlEvent(0, {"a": 2, "b": 0}))
    o2 = decide(policy, o1.state, ControlEvent(1, {"a": 2, "b": 11}))
    o3 = decide(policy, o2.state, ControlEvent(2, {"a": 0, "b": 0}))
    o4 = decide(policy, o3.state, ControlEvent(3, {"a": 0, "b": 0}))
    assert [o.decision for o in (o1, o2, o3, o4)] == [N, N, S, R]


def test_set_policy_notifies_only_for_new_elements() -> None:
    policy = Policy(PolicyType.SET, auto_resolve_minutes=5)
    state, decisions = ControlState(), []
    for areas in (["kanto"], ["kanto"], ["kanto", "tohoku"], ["tohoku"]):
        outcome = decide(policy, state, ControlEvent(0, areas=tuple(areas)))
        state = outcome.state
        decisions.append(outcome.decision)
    assert decisions == [N, S, N, S]
    released = tick(policy, state, 5 * MINUTE_MS)
    assert released is not None and released.decision is R and released.state.set_members == ()


def test_inactive_policy_behaves_as_bypass() -> None:
    policy = Policy.from_profile({"type": "METRIC", "status": "INACTIVE", "rules": []})
    assert policy.type is PolicyType.BYPASS
    assert decide(policy, ControlState(), ControlEvent(0)).decision is N


def test_changed_policy_type_starts_from_empty_state() -> None:
    state = decide(Policy(PolicyType.SET), ControlState(), ControlEvent(0, areas=("a",))).state
    outcome = decide(metric(), state, ControlEvent(1, {"pga": 1}))
    assert outcome.state.set_members == () and not outcome.state.episode_open


values = st.lists(st.one_of(st.none(), st.floats(0, 10, allow_nan=False)), max_size=60)


@settings(max_examples=300)
@given(values)
def test_replaying_a_sequence_gives_the_same_decisions(sequence: list[float | None]) -> None:
    assert run(metric(), sequence) == run(metric(), sequence)


@settings(max_examples=300)
@given(st.lists(st.floats(T, 10, allow_nan=False), min_size=1, max_size=40))
def test_never_two_notifies_for_equal_values_inside_the_peak_hold(sequence: list[float]) -> None:
    decisions = run(metric(peak_hold=60), sequence)
    for i in range(1, len(sequence)):
        if sequence[i] <= max(sequence[:i]):
            assert decisions[i] is S


@settings(max_examples=300)
@given(values, st.integers(1, 5))
def test_resolve_only_after_exactly_exit_stable_limit_consecutive_values_below(
    sequence: list[float | None], limit: int
) -> None:
    decisions = run(metric(exit_stable_limit=limit), sequence)
    for i, decision in enumerate(decisions):
        if decision is R:
            window = [v for v in sequence[: i + 1] if v is not None][-limit:]
            assert len(window) == limit and all(v < T for v in window)
