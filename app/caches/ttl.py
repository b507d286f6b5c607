"""The configuration cache: values by key for a TTL, single-flight and refreshed ahead, dropped by
organization when the ``config-changes`` topic (app/kafka/config_changes.py) announces a change."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

from app.caches.lru import CountingLRU

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
Loader = Callable[[], Awaitable[tuple[str, V]]]


class TTLCache(Generic[K, V]):
    """Values by key for ``ttl`` seconds; entries are grouped by organization for invalidation.

    ``get_or_load`` is single-flight (concurrent misses of one key share one load) and
    refreshes ahead: once an entry is ``refresh_after`` of its TTL old, the next read starts
    one background reload and keeps serving the cached value meanwhile. Staleness stays
    bounded by ``ttl`` counted from the start of the load that produced the value, so a
    change committed at time T is seen by every read after T + ``ttl`` at the latest.
    ``invalidate_org`` drops entries at once, and loads started before it are not cached.
    At most ``maxsize`` entries are kept: one more evicts the least recently read (it is loaded
    again on its next read).
    """

    def __init__(
        self,
        ttl: float,
        clock: Callable[[], float] = time.monotonic,
        refresh_after: float = 0.5,
        maxsize: int = 10_000,
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._refresh_age = ttl * refresh_after
        # key -> (expires at, org id, value, refresh due at, loader for refresh-ahead or None)
        self._items: CountingLRU[K, tuple[float, str, V, float, Loader[V] | None]] = CountingLRU(maxsize)
        self._loading: dict[K, asyncio.Future[V]] = {}
        self._epoch = 0  # bumped by every invalidation: loads begun under an older epoch are not cached

    @property
    def maxsize(self) -> float:
        return self._items.maxsize

    @property
    def evictions(self) -> int:
        return self._items.evictions

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        item = self._items.get(key)
        if item is None:
            return None
        now = self._clock()
        if item[0] <= now:
            del self._items[key]
            return None
        if item[3] <= now and item[4] is not None and key not in self._loading:
            self._refresh(key, item[4])
        return item[2]

    def put(self, key: K, org_id: str, value: V) -> None:
        self._store(key, org_id, value, self._clock(), None)

    def _store(self, key: K, org_id: str, value: V, started: float, load: Loader[V] | None) -> None:
        self._items[key] = (started + self._ttl, org_id, value, started + self._refresh_age, load)

    async def get_or_load(self, key: K, load: Loader[V]) -> V:
        """The cached value, or the result of ``load()`` -> ``(org_id, value)`` shared by concurrent callers.

        An exception of ``load`` reaches every caller waiting for it and is not cached.
        """
        value = self.get(key)
        if value is not None:
            return value
        future = self._loading.get(key)
        if future is None:
            future = self._start(key, load)
        return await asyncio.shield(future)

    def _start(self, key: K, load: Loader[V]) -> asyncio.Future[V]:
        task = asyncio.get_running_loop().create_task(self._load(key, load, self._epoch))
        task.add_done_callback(_retrieve)
        self._loading[key] = task
        return task

    async def _load(self, key: K, load: Loader[V], epoch: int) -> V:
        started = self._clock()
        try:
            org_id, value = await load()
        finally:
            if self._loading.get(key) is asyncio.current_task():
                del self._loading[key]
        if epoch == self._epoch:
            self._store(key, org_id, value, started, load)
        return value

    def _refresh(self, key: K, load: Loader[V]) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (synchronous use): the entry simply expires
        self._start(key, load).add_done_callback(lambda f: self._refresh_failed(key, f))

    def _refresh_failed(self, key: K, future: asyncio.Future[V]) -> None:
        if not future.cancelled() and future.exception() is not None:
            # the reload says the value is gone (revoked, deleted) or could not check: stop serving it
            log.debug("refresh of a cached entry failed; dropping it: %r", future.exception())
            self._items.pop(key, None)

    def invalidate_org(self, org_id: str) -> None:
        self._epoch += 1
        self._loading.clear()
        for key in [k for k, v in self._items.items() if v[1] == org_id]:
            self._items.pop(key, None)

    def clear(self) -> None:
        self._epoch += 1
        self._loading.clear()
        self._items.clear()


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a load's exception as seen (its callers got it, or all of them went away)."""
    if not future.cancelled():
        future.exception()
