"""The wall clock, in the unit of event time. Outside ``app/domain`` on purpose: rules take the
time as an argument, the adapters (routes, agents) read it here."""

from __future__ import annotations

import time

from app.domain.shared.milliseconds import to_ms


def now_ms() -> int:
    """Milliseconds since the epoch, now."""
    return to_ms(time.time())


def elapsed_ms(started: float) -> int:
    """Whole milliseconds since ``started``, a ``time.perf_counter()`` reading."""
    return to_ms(time.perf_counter() - started)
