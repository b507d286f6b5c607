"""Delivery items (push, e-mail, webhook) between attempts: when a fetched item is a
redelivery of one attempted already, and the items a failed attempt leads to (the next attempt
on a retry topic, or the dead letter that stays replayable). What an attempt's result means is
app/domain/delivery/webhooks.py (``classify``)."""

from __future__ import annotations

from typing import Any

# A delivery in one of these statuses makes no further attempt (until a replay).
FINAL = frozenset({"DELIVERED", "DEAD", "DISABLED", "EXPIRED", "REFUSED"})


def attempt_key(item: dict[str, Any]) -> tuple[str, int, int]:
    """One attempt of one delivery: (effect id, replay, attempt number)."""
    return (str(item["effect_id"]), int(item.get("replay", 0)), int(item["attempt"]))


def already_attempted(item: dict[str, Any], state: tuple[str, int, int] | None) -> bool:
    """Whether ``item`` is a redelivery: its delivery (status, attempts, replays) has moved past it."""
    if state is None:
        return False
    status, attempts, replays = state
    replay = int(item.get("replay", 0))
    if replays != replay:
        return replays > replay
    return status in FINAL or attempts >= int(item["attempt"])


def retry_item(item: dict[str, Any], kind: str, delay_s: float, now_s: float) -> dict[str, Any]:
    """The next attempt of ``item``, due ``delay_s`` after ``now_s``."""
    return {**item, "kind": kind, "attempt": int(item["attempt"]) + 1, "due_ms": int((now_s + delay_s) * 1000)}


def dead_item(item: dict[str, Any], kind: str, reason: str) -> dict[str, Any]:
    """``item`` out of attempts, with why: kept on the dead-letter topic for a replay."""
    return {**item, "kind": kind, "reason": reason}
