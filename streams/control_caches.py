"""The control agent's in-memory views of its table: when each state must auto-resolve, and the
states it wrote last (both rebuilt or emptied when the partition assignment changes)."""

from __future__ import annotations

import logging
from typing import Any

from app.domain.pipeline import StoredControl, View
from tables.codecs import UnreadableValue, is_progress_key, load_control

log = logging.getLogger("streams.control")


class DueIndex:
    """When each state of this worker's partitions must auto-resolve. Kept in memory: rebuilt
    from the table when the assignment changes, updated by the agent on every write."""

    def __init__(self) -> None:
        self.due: dict[bytes, int] = {}
        self.ticked: dict[bytes, int] = {}  # key → wall time a tick was sent (resent if not applied in 30 s)
        self.assignment: frozenset[int] | None = None

    def update(self, key: bytes, due_ms: int | None) -> None:
        self.ticked.pop(key, None)
        if due_ms is None:
            self.due.pop(key, None)
        else:
            self.due[key] = due_ms

    def rebuild(self, assignment: frozenset[int], items: Any) -> None:
        self.due.clear()
        self.ticked.clear()
        for key, raw in items:
            if is_progress_key(key):
                continue
            try:
                stored = load_control(raw)
            except UnreadableValue as exc:  # dead-lettered when its key is next read by the agent
                log.warning("control: no auto-resolve for key %r: %s", key.decode("utf-8", "replace"), exc)
                continue
            if stored is not None and stored.due_ms is not None:
                self.due[key] = stored.due_ms
        self.assignment = assignment

    def take_due(self, now_ms: int) -> list[bytes]:
        keys = []
        for key, due in self.due.items():
            sent = self.ticked.get(key)
            if due <= now_ms and (sent is None or now_ms - sent > 30_000):
                self.ticked[key] = now_ms
                keys.append(key)
        return keys


class StateCache:
    """Decoded states this worker wrote, so a key seen again skips the RocksDB read and the
    decode. Valid only within one assignment: every rebalance (Faust counts them) empties it,
    since a partition may have moved and come back with another worker's writes."""

    def __init__(self, size: int = 200_000) -> None:
        self.size = size
        self.items: dict[bytes, StoredControl] = {}
        # key → (a state, its view as traced): the "after" of a key's last record is the "before" of its next
        self.views: dict[bytes, View] = {}
        self.generation = -1

    def check(self, generation: int) -> None:
        if generation != self.generation:
            self.items.clear()
            self.views.clear()
            self.generation = generation

    def put(self, key: bytes, stored: StoredControl) -> None:
        if len(self.items) >= self.size:
            self.items.clear()
            self.views.clear()
        self.items[key] = stored
