"""Outputs of one batch of events, sent together: one record per output topic and source
partition holding many items (Faust's per-send cost dominates a worker's CPU), then awaited
until the broker acknowledged them. Items keep their order within a source partition, so the
sinks see an episode's NOTIFY before its RESOLVE."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import orjson

# Far below the broker's and the producer's 1 MiB record limit; a single larger item goes alone.
MAX_RECORD_BYTES = 256 * 1024


def chunks(items: list[bytes], limit: int = MAX_RECORD_BYTES) -> list[bytes]:
    """``{"items": [...]}`` records of already encoded items, each at most ``limit`` bytes (unless one item is)."""
    out: list[bytes] = []
    current: list[bytes] = []
    size = 0
    for item in items:
        if current and size + len(item) + 1 > limit:
            out.append(b'{"items":[' + b",".join(current) + b"]}")
            current, size = [], 0
        current.append(item)
        size += len(item) + 1
    if current:
        out.append(b'{"items":[' + b",".join(current) + b"]}")
    return out


def items_of(value: dict[str, Any]) -> list[Any]:
    """The items of a batch record (a record without ``items`` is one item)."""
    items = value.get("items")
    return items if isinstance(items, list) else [value]


class Outbox:
    def __init__(self) -> None:
        self._items: dict[tuple[Any, int], list[dict[str, Any]]] = defaultdict(list)
        self.pending: list[Any] = []  # futures of records sent already, awaited with the rest

    def add(self, topic: Any, partition: int, item: dict[str, Any]) -> None:
        """Queue ``item`` (encoded when delivered, so it may still change until then)."""
        self._items[(topic, partition)].append(item)

    async def deliver(self) -> None:
        """Send everything and wait until the broker acknowledged it (raises if it cannot)."""
        pending, self.pending = self.pending, []
        for (topic, partition), items in self._items.items():
            for value in chunks([orjson.dumps(item) for item in items]):
                pending.append(await topic.send(value=value, partition=partition))
        self._items.clear()
        if pending:
            await asyncio.gather(*pending)
