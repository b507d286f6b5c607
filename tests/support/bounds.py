"""A time bound per parser call for the fuzzing tests, measured so that only the call counts.

The bound catches inputs that make a parser super-linear (catastrophic backtracking, quadratic
joins): those burn CPU in the calling thread. It must not fire because the 2-core machine was busy
elsewhere (a broker, a database, another test's worker) or because a garbage collection of the
whole test session happened to start inside the call; CI once saw a 516 ms wall-clock reading for
a 700-byte body that parses in microseconds. So the bound reads the calling thread's CPU time
(time spent descheduled does not count) with the cyclic collector paused for the call.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

BOUND_SECONDS = 0.25  # CPU time per input; a parse takes microseconds, a blow-up takes seconds


@contextmanager
def bounded(what: Any, bound: float = BOUND_SECONDS) -> Iterator[None]:
    """Fail when the block used more than ``bound`` seconds of this thread's CPU time."""
    collecting = gc.isenabled()
    gc.disable()
    started = time.thread_time()
    try:
        yield
    finally:
        took = time.thread_time() - started
        if collecting:
            gc.enable()
    assert took < bound, f"{took * 1000:.0f} ms of CPU for {str(what)[:80]!r}"
