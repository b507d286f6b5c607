"""The delivery agents skip an attempt this worker made lately even before its row is stored (a
record fetched again after a held-back commit or a rebalance must not be posted twice)."""

from __future__ import annotations

from streams.actions import RecentAttempts, attempt_key


def test_recent_attempts_are_remembered_by_effect_replay_and_attempt() -> None:
    recent = RecentAttempts(size=3)
    item = {"effect_id": "act_1", "attempt": 1}
    assert attempt_key(item) not in recent
    recent.add(attempt_key(item))
    assert attempt_key(item) in recent
    assert attempt_key({**item, "attempt": 2}) not in recent, "a retry is a new attempt"
    assert attempt_key({**item, "replay": 1}) not in recent, "a replay is a new attempt"


def test_recent_attempts_are_bounded_oldest_first() -> None:
    recent = RecentAttempts(size=3)
    for i in range(5):
        recent.add((f"act_{i}", 0, 1))
    assert [k[0] for k in recent.keys] == ["act_2", "act_3", "act_4"]
    recent.add(("act_2", 0, 1))  # used again: the newest
    recent.add(("act_5", 0, 1))
    assert [k[0] for k in recent.keys] == ["act_4", "act_2", "act_5"]
