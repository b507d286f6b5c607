"""The offsets of a source partition known to hold no record an agent receives: transaction
markers and aborted records, as the fetcher passed over them (tables/faust_patches.py, 8).

With ``read_committed`` a consumer never receives a commit or abort marker, nor an aborted
transaction's records, yet each takes an offset. An agent that applies each record once and in
offset order (streams/progress.py) must tell such an offset from a record that did not reach it.
Counting the markers a transaction should leave is not exact: a marker is written when its
transaction commits, after any records other producers appended meanwhile. The fetcher does know:
it reads every batch from the broker, the control and aborted ones included, and skips them. What
it skipped is kept here, per partition, as sorted disjoint ``[start, end)`` ranges.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Hashable

MAX_RANGES = 4096  # per partition; the oldest are forgotten first (a fetch again finds them anew)


class OffsetRanges:
    """Sorted, disjoint, half-open ranges of offsets per partition, safe to add from the consumer's
    thread while the agents read them on the event loop."""

    def __init__(self, max_ranges: int = MAX_RANGES) -> None:
        self.max_ranges = max_ranges
        self._starts: dict[Hashable, list[int]] = {}
        self._ends: dict[Hashable, list[int]] = {}
        self._lock = threading.Lock()

    def add(self, key: Hashable, start: int, end: int) -> None:
        """Record ``[start, end)`` for ``key`` (merged with the ranges it touches)."""
        if end <= start:
            return
        with self._lock:
            starts = self._starts.setdefault(key, [])
            ends = self._ends.setdefault(key, [])
            # the ranges that overlap or touch [start, end): ends >= start and starts <= end
            lo = bisect.bisect_left(ends, start)
            hi = bisect.bisect_right(starts, end)
            if lo < hi:
                start, end = min(start, starts[lo]), max(end, ends[hi - 1])
            starts[lo:hi] = [start]
            ends[lo:hi] = [end]
            if len(starts) > self.max_ranges:
                del starts[0], ends[0]

    def covers(self, key: Hashable, start: int, end: int) -> bool:
        """Whether every offset of ``[start, end)`` is in a recorded range (an empty range is)."""
        if end <= start:
            return True
        with self._lock:
            starts, ends = self._starts.get(key), self._ends.get(key)
            if not starts or ends is None:
                return False
            i = bisect.bisect_right(starts, start) - 1
            return i >= 0 and ends[i] >= end

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._starts.pop(key, None)
            self._ends.pop(key, None)
