"""What the agents need of their tables and of their consumer, as two small Protocols.

The agents (streams/) are written against these; :mod:`tables.faust_adapter` is the one
implementation, and the one module besides :mod:`tables.faust_patches` that touches Faust's and
aiokafka's internals (both versions are capped in pyproject.toml, so an upgrade breaks there,
loudly). The shape follows quix-streams' state: reads and writes act on the partition of the record
in hand, and a batch's writes are stored together, changelog first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol


class PartitionState(Protocol):
    """A changelog-backed key/value table, co-partitioned with its source topic. Reads and writes
    act on the partition of the event made current by :meth:`SourceConsumer.use_event`."""

    def get(self, key: bytes) -> bytes | None:
        """The stored bytes of ``key``, None if absent."""
        ...

    async def write(self, items: Sequence[tuple[Any, bytes, bytes]]) -> None:
        """Store ``(event, key, value)`` items: per partition, the changelog records first (awaited
        until the broker has them), then the local store, atomically with its changelog offset."""
        ...

    def delete(self, key: bytes) -> None:
        """Remove ``key`` (a tombstone in the changelog)."""
        ...

    def items(self) -> Iterable[tuple[bytes, bytes]]:
        """Every stored item of the partitions this worker holds."""
        ...

    def progress(self) -> tuple[int, int] | None:
        """The next source offset the current partition must apply and the commit markers owed
        before it (written by earlier versions, no longer read: streams/progress.py); None if never
        written."""
        ...

    def progress_of(self, partition: int) -> tuple[int, int] | None:
        """:meth:`progress` of ``partition``, without an event in hand."""
        ...


class SourceConsumer(Protocol):
    """The worker's consumer, as the agents that keep their own progress use it."""

    def use_event(self, event: Any) -> None:
        """Make ``event`` current for this task: the table reads and writes that follow use its partition."""
        ...

    def generation(self) -> int:
        """Changes with every rebalance this worker takes part in."""
        ...

    def active_partitions(self, source: Any) -> frozenset[int]:
        """The partitions of ``source`` (a topic) this worker holds as active."""
        ...

    def recovering(self) -> bool:
        """Whether the tables are being recovered (from a rebalance's assignment to its end)."""
        ...

    def applying(self) -> AbstractAsyncContextManager[None]:
        """Around a batch that reads and writes the tables: a recovery starts only once none runs."""
        ...

    def non_records_of(self, source: Any) -> Callable[[int, int, int], bool]:
        """``(partition, start, end)`` → whether the fetcher skipped every offset of ``[start, end)`` of
        ``source`` (a topic) as a transaction marker or an aborted record (tables/offset_ranges.py)."""
        ...

    async def seek_back(self, source: Any, partition: int, offset: int) -> bool:
        """Fetch ``source``'s ``partition`` again from ``offset``; False if no longer assigned here."""
        ...
