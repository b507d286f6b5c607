"""Every in-process cache of the worker and the API, in one place.

- :class:`CountingLRU` (lru.py): the bounded LRU (``cachetools``) that counts its evictions, so every
  cache has a size bound (app/settings/memory.py) and a metric (``tocsin_cache_*``,
  app/observability/metrics.py ``register_cache``): the worker's control states and views, and the
  entries of every TTL cache;
- :class:`TTLCache` (ttl.py): configuration and tokens for a TTL, single-flight and refreshed ahead,
  dropped by organization when the ``config-changes`` topic announces a change (API principals and
  topics, the worker's topic configs, the exchange's credentials);
- :class:`BoundedMemo` (memo.py): a dict that empties itself when full, for the hot paths' memos
  (encoded span fields, partitions of keys).

The pure domain keeps its own memos (``functools.lru_cache``, a bounded dict in
``resource_names.py`` and ``pipeline.py``): it imports nothing outside itself but ``app/errors.py``.
"""

from __future__ import annotations

from app.caches.lru import CountingLRU
from app.caches.memo import BoundedMemo
from app.caches.ttl import TTLCache

__all__ = ["BoundedMemo", "CountingLRU", "TTLCache"]
