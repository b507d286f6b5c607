"""The bounded LRU of every in-process cache: an LRU (``cachetools``) that counts its evictions, so
every cache has a size bound and a metric (app/observability/metrics.py ``register_cache``;
docs/operations/memory.md)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from cachetools import LRUCache

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class CountingLRU(LRUCache[K, V]):
    """At most ``maxsize`` entries; inserting one more evicts the least recently used and counts it.

    A ``maxsize`` of 0 keeps nothing (every insert is dropped, uncounted)."""

    def __init__(self, maxsize: int) -> None:
        super().__init__(maxsize=max(maxsize, 1))
        self.keeps_nothing = maxsize == 0
        self.evictions = 0

    def __setitem__(self, key: K, value: V) -> None:
        if self.keeps_nothing:
            return
        super().__setitem__(key, value)

    def popitem(self) -> tuple[K, V]:
        """What the cache calls to make room for a new entry: an eviction."""
        item = super().popitem()
        self.evictions += 1
        return item

    def clear(self) -> None:
        """Empty it (a rebalance, an invalidation): not evictions."""
        while self:
            super().popitem()
