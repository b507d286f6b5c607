"""Event-control decisions. BYPASS for now; METRIC and SET come with their issue."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ControlDecision(StrEnum):
    NOTIFY = "NOTIFY"
    SUPPRESS = "SUPPRESS"
    RESOLVE = "RESOLVE"


class PolicyType(StrEnum):
    BYPASS = "BYPASS"
    METRIC = "METRIC"
    SET = "SET"


def policy_type(profile: dict[str, Any] | None) -> PolicyType:
    """The policy type of a topic's ``control_policy_profile`` (none means BYPASS)."""
    if not profile or profile.get("status", "ACTIVE") != "ACTIVE":
        return PolicyType.BYPASS
    return PolicyType(profile.get("type", "BYPASS"))


def decide_bypass() -> ControlDecision:
    """BYPASS: every event notifies; there is no state and no episode."""
    return ControlDecision.NOTIFY
