"""Token buckets keyed by anything (credential id, client address); per process."""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable


class RateLimiter:
    """``rate`` requests per second with bursts of ``burst``; :meth:`take` says when to retry.

    At most ``max_keys`` buckets are kept: a new key beyond that evicts the least recently used
    one. Only a key nobody has used for longest loses its state (and it starts again from a full
    bucket), so flooding the map with new keys cannot reset the limit of a key in use. A caller
    gains at most ``burst`` requests from an eviction, and only after ``max_keys`` other keys
    were used since its last request: within the bound's reach, the limit holds.
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000):
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()
        self.evictions = 0

    @property
    def maxsize(self) -> int:
        return self._max_keys

    def take(self, key: Hashable, count: int = 1) -> float:
        """0 when allowed (``count`` tokens taken), else the seconds until ``count`` tokens are available
        (then nothing is taken). A ``count`` above the burst is never allowed (:meth:`fits` says so)."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            tokens = self._burst
            if len(self._buckets) >= self._max_keys:
                self._buckets.popitem(last=False)
                self.evictions += 1
        else:
            tokens = min(self._burst, bucket[0] + (now - bucket[1]) * self._rate)
            self._buckets.move_to_end(key)
        if tokens >= count:
            self._buckets[key] = (tokens - count, now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (count - tokens) / self._rate

    def fits(self, count: int) -> bool:
        """Whether ``count`` tokens can ever be taken at once (a full bucket holds ``burst``)."""
        return count <= self._burst

    def __len__(self) -> int:
        return len(self._buckets)

    def peek(self, key: Hashable) -> float:
        """What :meth:`take` would answer, without taking a token: 0 when one is available."""
        now = self._clock()
        tokens, last = self._buckets.get(key, (self._burst, now))
        tokens = min(self._burst, tokens + (now - last) * self._rate)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self._rate


def retry_after_header(seconds: float) -> str:
    return str(max(1, math.ceil(seconds)))
