"""The retry schedule: exponential backoff with jitter, and the delay levels a wait is parked in — pure.

One schedule serves every wait that backs off: webhook deliveries (their Kafka delay levels),
and the waits for the database and the broker at start.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RetrySchedule:
    """Exponential backoff with proportional downward jitter.

    After failed attempt ``n`` (1-based: attempt 1 is the first, immediate delivery) the
    nominal wait is ``min(max_delay_s, base_s * factor ** (n - 1))`` and the wait is
    ``nominal * (1 - jitter * rand)`` for ``rand`` in [0, 1): within
    ``[nominal * (1 - jitter), nominal]``, never above the nominal (so never above the cap).
    ``jitter=1`` is "full jitter". A delivery makes at most ``max_attempts`` attempts.

    The defaults follow the spirit of Standard Webhooks' example schedule (5 s, 5 min, 30 min,
    2 h, 5 h, 10 h, 14 h, 20 h, 24 h) as a factor series: 5 s, 30 s, 3 min, 18 min, 1.8 h, then
    10 h six times — 12 attempts over about 62 h — and 6 delay levels.
    """

    base_s: float = 5.0
    factor: float = 6.0
    max_delay_s: float = 36_000.0
    max_attempts: int = 12
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if not (math.isfinite(self.base_s) and self.base_s > 0):
            raise ValueError("base_s must be a positive number")
        if not (math.isfinite(self.factor) and self.factor >= 1):
            raise ValueError("factor must be at least 1")
        if not (math.isfinite(self.max_delay_s) and self.max_delay_s >= self.base_s):
            raise ValueError("max_delay_s must be at least base_s")
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError("max_attempts must be a positive integer")
        if not 0 <= self.jitter <= 1:
            raise ValueError("jitter must be within [0, 1]")

    def nominal(self, attempt: int) -> float:
        """The un-jittered wait after failed attempt ``attempt`` (its delay level)."""
        if attempt < 1:
            raise ValueError("attempts are numbered from 1")
        try:
            value = self.base_s * self.factor ** (attempt - 1)
        except OverflowError:
            return self.max_delay_s
        return min(self.max_delay_s, value)

    def delay(self, attempt: int, rand: float) -> float:
        """The wait after failed attempt ``attempt``, jittered by ``rand`` in [0, 1)."""
        if not 0 <= rand < 1:
            raise ValueError("rand must be within [0, 1)")
        return self.nominal(attempt) * (1 - self.jitter * rand)


def delay_levels(schedule: RetrySchedule) -> list[float]:
    """The distinct delay levels a delivery can pass through, ascending: the nominal waits after
    attempts 1 … ``max_attempts - 1`` (none when a delivery has a single attempt).

    The worker keeps one Kafka delay topic per level. A waiting delivery goes to the level
    :func:`level_for` its wait — the smallest level ≥ it — and carries its own due time
    (``DeliveryOutcome.retry_at_s``); the level's consumer holds the head record until that record is
    due, then moves on. So a delivery is never sent early, and at most ``level - its wait`` late,
    because every record ahead of it in the level was due within ``level`` of being parked: for
    a backoff wait that is at most ``jitter * level`` (its nominal is ≥ the level it lands in), for
    a longer ``Retry-After`` wait less than the gap to the next lower level.
    """
    levels: list[float] = []
    for attempt in range(1, schedule.max_attempts):
        level = schedule.nominal(attempt)
        if not levels or level > levels[-1]:
            levels.append(level)
        if level >= schedule.max_delay_s:
            break
    return levels


def level_for(delay_s: float, levels: list[float]) -> float:
    """The smallest level ≥ ``delay_s`` (ValueError when ``delay_s`` exceeds them all)."""
    index = bisect_left(levels, delay_s)
    if index == len(levels):
        raise ValueError(f"no delay level holds a wait of {delay_s} s")
    return levels[index]
