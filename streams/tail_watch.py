"""The tail watch: every source partition a consumer holds is applied up to its last stable offset
within seconds, whether or not another record arrives (the retry scheduler's alarm: streams/retry.py).

Once a second the watch reads the last stable offset of every partition the consumer holds (one
ListOffsets request, ``read_committed``) and compares it with what was applied (the committed
offset). A partition behind with nothing in flight and nothing applied for ``GRACE_S`` is fetched
again from the applied offset. Then:

- records come and are applied: a WARNING line says which were late, with what the consumer held
  when the watch found them (``tocsin_tail_refetches_total{outcome="recovered"}``);
- the fetcher passes over the offsets without a record (transaction markers, an aborted
  transaction): nothing was missing, an INFO line (``outcome="empty"``);
- still behind after ``RETRIES`` fetches: an ERROR line, ``tocsin_tail_stuck_partitions`` and a failing
  readiness until it catches up (``outcome="stuck"``); it keeps trying, more slowly.

Nothing is decided here: the watch only sends the consumer back, and what was applied is skipped or
deduplicated downstream.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.observability import metrics

log = logging.getLogger(__name__)

CHECK_EVERY_S = 1.0
GRACE_S = 3.0  # behind, nothing in flight, nothing applied for this long: fetched again
RETRIES = 3  # fetches again before the partition is reported stuck
STUCK_RETRY_S = 15.0  # between fetches again once stuck


class TailView(Protocol):
    """What the watch reads of a consumer, and the one thing it does to it (streams/retry.py)."""

    def generation(self) -> int:
        """Changes with every rebalance."""
        ...

    def recovering(self) -> bool:
        """A rebalance or a table recovery is under way (the watch waits for its end)."""
        ...

    def held(self, topic: str) -> Sequence[int]:
        """The partitions of ``topic`` this consumer holds and reads now."""
        ...

    async def stable_ends(self, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The last stable offset of each ``(topic, partition)`` (the end a ``read_committed``
        consumer reaches)."""
        ...

    def in_flight(self, topic: str, partition: int) -> bool:
        """A record of the partition was handed to an agent and is not acknowledged yet."""
        ...

    def non_records(self, topic: str, partition: int, start: int, end: int) -> bool:
        """The fetcher passed over every offset of ``[start, end)`` without a record."""
        ...

    def describe(self, topic: str, partition: int) -> str:
        """What the consumer holds of the partition (offsets), for the log line."""
        ...

    async def seek(self, topic: str, partition: int, offset: int) -> bool:
        """Fetch the partition again from ``offset``; False if it is no longer held."""
        ...


@dataclass(frozen=True)
class Watched:
    """One agent's promise: ``applied(partition)`` is the next offset of ``topic`` it has applied
    (None: unknown, the partition is not watched until it is)."""

    stage: str
    topic: str
    applied: Callable[[int], Awaitable[int | None]]


@dataclass
class Behind:
    offset: int  # the applied offset when last seen
    since: float  # since when it has not moved with nothing in flight
    first: int  # the applied offset when the watch first fetched again
    sought: bool = False  # fetched again at least once
    tries: int = 0  # fetches again since the applied offset last moved
    found: str = ""  # what the consumer held when the watch first fetched again
    end: int = 0


class TailWatch:
    def __init__(
        self,
        view: TailView,
        watched: Sequence[Watched],
        grace_s: float = GRACE_S,
        retries: int = RETRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.view = view
        self.watched = list(watched)
        self.grace_s = grace_s
        self.retries = retries
        self.clock = clock
        self.behind: dict[tuple[str, int], Behind] = {}
        self.stuck: dict[tuple[str, int], str] = {}
        self.generation: int | None = None

    def problems(self) -> list[str]:
        """The partitions reported stuck (empty: ready)."""
        return sorted(self.stuck.values())

    async def check(self) -> None:
        """One look at every partition held (the worker calls it every ``CHECK_EVERY_S``)."""
        view = self.view
        if view.recovering():
            self._forget_timers()
            return
        generation = view.generation()
        if generation != self.generation:  # partitions may have moved: start the timers again
            self.generation = generation
            self._forget_timers()
        held = {w.topic: list(view.held(w.topic)) for w in self.watched}
        here = {(w.stage, p) for w in self.watched for p in held[w.topic]}
        for gone in [key for key in (*self.behind, *self.stuck) if key not in here]:
            self.behind.pop(gone, None)  # another worker's now: its watch takes over
            self.stuck.pop(gone, None)
        tps = sorted({(topic, p) for topic, partitions in held.items() for p in partitions})
        if not tps:
            self._set_stuck_gauges()
            return
        ends = await view.stable_ends(tps)
        if view.recovering() or view.generation() != generation:
            return  # a rebalance began meanwhile: its end offsets may be another owner's
        for w in self.watched:
            for partition in held[w.topic]:
                end = ends.get((w.topic, partition))
                applied = await w.applied(partition)
                if end is not None and applied is not None:
                    await self._look(w, partition, applied, end)
        self._set_stuck_gauges()

    def _forget_timers(self) -> None:
        for key, b in list(self.behind.items()):
            if not b.sought:
                del self.behind[key]
            else:  # keep what was found; the timer starts again after the rebalance
                b.since = self.clock()

    async def _look(self, w: Watched, partition: int, applied: int, end: int) -> None:
        view, key, now = self.view, (w.stage, partition), self.clock()
        b = self.behind.get(key)
        if applied >= end or view.non_records(w.topic, partition, applied, end):
            if b is not None and b.sought:
                self._caught_up(w, partition, b, applied, end)
            self.behind.pop(key, None)
            if self.stuck.pop(key, None) is not None:
                log.info("tail watch: %s: %s[%d]: caught up at %d", w.stage, w.topic, partition, end)
            return
        if b is None:
            self.behind[key] = Behind(applied, now, applied)
            return
        if applied != b.offset or view.in_flight(w.topic, partition):
            if applied != b.offset:
                b.tries = 0  # moving again
            b.offset, b.since = applied, now
            return
        if now - b.since < (STUCK_RETRY_S if key in self.stuck else self.grace_s):
            return
        if b.tries >= self.retries and key not in self.stuck:
            self.stuck[key] = f"{w.stage} {w.topic}[{partition}] applied {applied} < {end}"
            metrics.TAIL_REFETCHES.labels(w.stage, "stuck").inc()
            log.error(
                "tail watch: %s: %s[%d]: applied offset %d still behind the last stable offset %d after %d "
                "fetches again (%s); tocsin_tail_stuck_partitions counts it until it catches up",
                w.stage,
                w.topic,
                partition,
                applied,
                end,
                b.tries,
                view.describe(w.topic, partition),
            )
        found = view.describe(w.topic, partition)
        if not b.sought:
            b.first, b.found, b.end, b.sought = applied, found, end, True
        b.tries += 1
        b.since = now
        metrics.TAIL_REFETCHES.labels(w.stage, "sought").inc()
        log.info(
            "tail watch: %s: %s[%d]: applied offset %d behind the last stable offset %d for %.0f s with nothing "
            "in flight (%s); fetching again from %d",
            w.stage,
            w.topic,
            partition,
            applied,
            end,
            self.grace_s,
            found,
            applied,
        )
        if not await view.seek(w.topic, partition, applied):
            self.behind.pop(key, None)
            self.stuck.pop(key, None)

    def _caught_up(self, w: Watched, partition: int, b: Behind, applied: int, end: int) -> None:
        if applied > b.first:
            metrics.TAIL_REFETCHES.labels(w.stage, "recovered").inc()
            log.warning(
                "tail watch: %s: %s[%d]: records %d..%d were applied only after the watch fetched them again "
                "(the consumer held: %s)",
                w.stage,
                w.topic,
                partition,
                b.first,
                min(applied, b.end) - 1,
                b.found,
            )
        else:
            metrics.TAIL_REFETCHES.labels(w.stage, "empty").inc()
            log.info(
                "tail watch: %s: %s[%d]: offsets %d..%d hold no record (transaction markers, aborted records)",
                w.stage,
                w.topic,
                partition,
                b.first,
                end - 1,
            )

    def _set_stuck_gauges(self) -> None:
        for w in self.watched:
            metrics.TAIL_STUCK.labels(w.stage).set(sum(1 for stage, _p in self.stuck if stage == w.stage))


async def run_forever(watch: TailWatch, every_s: float = CHECK_EVERY_S) -> None:
    """Check every ``every_s``; a check that fails (the broker away) is logged and tried again."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await watch.check()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the next check tries again; the stuck state stays as it was
            log.warning("tail watch: check failed: %r", exc)
