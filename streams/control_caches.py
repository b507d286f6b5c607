"""The control stage's in-memory views of its state, each bounded (README "Memory"): when the
earliest states must auto-resolve, and the states it wrote last. The table (RocksDB and its
changelog) stays the one source of truth: an evicted state is read from it again, and a timer
beyond the in-memory window is found again by a scan of it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sortedcontainers import SortedList

from app.caches import CountingLRU
from app.domain.pipeline import StoredControl, View
from tables.codecs import UnreadableValue, is_progress_key, load_due

log = logging.getLogger("streams.control")

NEVER = 2**63
# A window that is still more than half full is scanned again at most this often (seconds): only
# when its entries stay due without leaving it (ticks not applied yet) while others wait beyond it.
RESCAN_INTERVAL_S = 30.0


class TimeWindow:
    """``key → time`` for the ``size`` earliest times of a set kept elsewhere (the table).

    Complete below ``horizon``: every key of the set whose time is earlier than ``horizon`` is
    here. Setting a time at or past the horizon keeps nothing (a scan finds it once the horizon
    is reached); one more than ``size`` entries drops the latest, whose time becomes the
    horizon. :meth:`reset` refills the window from a full scan of the set.
    """

    def __init__(self, size: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.times: dict[bytes, int] = {}
        self.order: SortedList = SortedList()  # (time, key)
        self.horizon = NEVER
        self.evictions = 0
        self.scans = 0
        self._clock = clock
        self._scanned_at = -RESCAN_INTERVAL_S

    @property
    def maxsize(self) -> int:
        return self.size

    def __len__(self) -> int:
        return len(self.times)

    def __contains__(self, key: bytes) -> bool:
        return key in self.times

    def set(self, key: bytes, at: int | None) -> None:
        """``key``'s time is now ``at`` (None: it has none)."""
        self.discard(key)
        if at is None or at >= self.horizon:
            return
        self.times[key] = at
        self.order.add((at, key))
        if len(self.times) > self.size:
            last_at, last_key = self.order.pop()
            del self.times[last_key]
            self.horizon = min(self.horizon, last_at)
            self.evictions += 1

    def discard(self, key: bytes) -> None:
        at = self.times.pop(key, None)
        if at is not None:
            self.order.remove((at, key))

    def reset(self, items: Iterable[tuple[bytes, int]]) -> None:
        """Refill from every ``(key, time)`` of the set: the earliest ``size`` are kept."""
        self.times.clear()
        self.order.clear()
        self.horizon = NEVER
        self.scans += 1
        self._scanned_at = self._clock()
        for key, at in items:
            self.set(key, at)

    def needs_scan(self, now: int) -> bool:
        """Whether keys beyond the window may be due at ``now`` and the window has room for them."""
        if self.horizon > now:
            return False
        return len(self.times) <= self.size // 2 or self._clock() - self._scanned_at >= RESCAN_INTERVAL_S

    def due(self, now: int) -> Iterator[tuple[int, bytes]]:
        """The ``(time, key)`` entries at or before ``now``, earliest first."""
        for at, key in self.order:
            if at > now:
                break
            yield at, key

    def pop_due(self, now: int) -> list[tuple[int, bytes]]:
        out = list(self.due(now))
        for _at, key in out:
            del self.times[key]
        del self.order[: len(out)]
        return out


def due_times(items: Iterable[tuple[bytes, bytes]]) -> Iterator[tuple[bytes, int]]:
    """``(key, auto-resolve time)`` of every stored state that has one."""
    for key, raw in items:
        if is_progress_key(key):
            continue
        try:
            due = load_due(raw)
        except UnreadableValue as exc:  # dead-lettered when its key is next read by the agent
            log.warning("control: no auto-resolve for key %r: %s", key.decode("utf-8", "replace"), exc)
            continue
        if due is not None:
            yield key, due


class DueIndex:
    """When the states of this worker's partitions must auto-resolve: the earliest
    TOCSIN_CONTROL_DUE_WINDOW_SIZE in memory, the rest found by a scan of the table when the
    window's horizon comes (every state carries its own ``due_ms``). Rebuilt when the
    assignment changes, updated by the agent on every write."""

    def __init__(self, size: int = 50_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.window = TimeWindow(size, clock)
        self.ticked: dict[bytes, int] = {}  # key → wall time a tick was sent (resent if not applied in 30 s)
        self.assignment: frozenset[int] | None = None

    @property
    def due(self) -> dict[bytes, int]:
        return self.window.times

    def update(self, key: bytes, due_ms: int | None) -> None:
        self.ticked.pop(key, None)
        self.window.set(key, due_ms)

    def rebuild(self, assignment: frozenset[int], items: Any) -> None:
        self.rescan(items)
        self.assignment = assignment

    def rescan(self, items: Any) -> None:
        self.window.reset(due_times(items))
        self.ticked = {k: at for k, at in self.ticked.items() if k in self.window}

    def take_due(self, now_ms: int, items: Callable[[], Any] | None = None) -> list[bytes]:
        """The keys to tick now; ``items()`` gives the table for a scan when keys beyond the window may be due."""
        if items is not None and self.window.needs_scan(now_ms):
            log.info("control: auto-resolve times beyond the in-memory window are due; scanning the table")
            self.rescan(items())
        keys = []
        for _due, key in self.window.due(now_ms):
            sent = self.ticked.get(key)
            if sent is None or now_ms - sent > 30_000:
                self.ticked[key] = now_ms
                keys.append(key)
        return keys


class StateCache:
    """Decoded states this worker wrote, so a key seen again skips the RocksDB read and the
    decode; the TOCSIN_CONTROL_STATE_CACHE_SIZE most recently used (an evicted one is read from
    the table again: the cache only ever holds what the table holds). Valid only within one
    assignment: every rebalance (Faust counts them) empties it, since a partition may have moved
    and come back with another worker's writes."""

    def __init__(self, size: int = 20_000) -> None:
        self.size = size
        self.items: CountingLRU[bytes, StoredControl] = CountingLRU(size)
        # key → (a state, its view as traced): the "after" of a key's last record is the "before" of its next
        self.views: CountingLRU[bytes, View] = CountingLRU(size)
        self.generation = -1

    def check(self, generation: int) -> None:
        if generation != self.generation:
            self.items.clear()
            self.views.clear()
            self.generation = generation

    def put(self, key: bytes, stored: StoredControl) -> None:
        self.items[key] = stored
