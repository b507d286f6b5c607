"""Commits that never pass a hole (faust_patches.py, items 2b and 2c): a commit of one of our topics
moves only from the committed offset through acknowledged offsets without a gap, a jump of the fetch
is logged and never committed past, and a commit held back for ``STALL_SECONDS`` by records no agent
holds sends the consumer back to the committed offset to fetch the missing records again."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from faust.transport import consumer as faust_consumer

from app.kafka import topics
from app.observability import metrics
from app.settings import Settings

log = logging.getLogger(__name__)
STALL_SECONDS = 10.0


class CommitGuard:
    """2b and 2c for the topics named ours (contiguous offsets)."""

    def __init__(self, ours: Any, clock: Any = time.monotonic) -> None:
        self.ours = ours
        self.clock = clock
        self.known: dict[Any, int] = {}  # last committed offset we know, kept across Faust's revoke-time pops
        self.stalled: dict[Any, tuple[int, float, bool]] = {}  # tp → (committed, since, refetch sent)
        self.tasks: set[asyncio.Future[None]] = set()

    def new_offset(self, consumer: Any, tp: Any, original: Any) -> int | None:
        if not self.ours(tp.topic):
            result: int | None = original(consumer, tp)
            return result
        committed = consumer._committed_offset[tp]
        if committed is None:
            committed = self.known.get(tp)
        acked = consumer._acked[tp]
        if committed is not None and acked:
            below = [offset for offset in acked if offset < committed]
            if below:  # acknowledged again after a seek back: committed already
                acked[:] = [offset for offset in acked if offset >= committed]
                consumer._acked_index[tp].difference_update(below)
            if acked and min(acked) != committed:
                self._stall(consumer, tp, committed, min(acked))
                return None
        self.stalled.pop(tp, None)
        result = original(consumer, tp)
        if result is not None:
            self.known[tp] = result
        return result

    def seeked(self, committed: dict[Any, int | None]) -> None:
        for tp, offset in committed.items():
            if offset is not None:
                self.known[tp] = offset

    def _stall(self, consumer: Any, tp: Any, committed: int, first: int) -> None:
        now = self.clock()
        seen = self.stalled.get(tp)
        if tp not in consumer.assignment():  # acknowledged after its revoke: the new owner reads it
            self.stalled.pop(tp, None)
            return
        if seen is None or seen[0] != committed or _in_flight(consumer, tp, committed, first):
            # a record still being processed (delivered to an agent, not yet acknowledged: several
            # actors acknowledge out of order, a slow batch takes long) is not missing: wait
            self.stalled[tp] = (committed, now, False)
            return
        if seen[2] or now - seen[1] < STALL_SECONDS:
            return
        self.stalled[tp] = (committed, now, True)
        metrics.OFFSET_REFETCHES.labels("commit").inc()
        log.warning(
            "consumer: %s[%d]: offsets %d..%d never acknowledged for %.0f s; fetching them again",
            tp.topic,
            tp.partition,
            committed,
            first - 1,
            now - seen[1],
        )
        task = asyncio.ensure_future(_seek_back(consumer, tp, committed))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


def _in_flight(consumer: Any, tp: Any, start: int, end: int) -> bool:
    """Whether a record of ``tp`` in ``[start, end)`` was delivered to an agent and is not yet
    acknowledged (Faust tracks every message a stream took until it is acknowledged)."""
    return any(m.tp == tp and start <= m.offset < end for m in list(consumer._unacked_messages))


async def _seek_back(consumer: Any, tp: Any, offset: int) -> None:
    if tp not in consumer.assignment():
        return
    try:
        await consumer.seek_wait({tp: offset})
    except Exception as exc:  # noqa: BLE001 - revoked meanwhile, or the broker away: the next stall tries again
        log.warning("consumer: %s[%d]: could not seek back to %d: %r", tp.topic, tp.partition, offset, exc)


guard: CommitGuard | None = None
ORIGINAL_NEW_OFFSET = faust_consumer.Consumer._new_offset  # Faust's own, before install (tests compare)
ORIGINAL_ADD_GAP = faust_consumer.Consumer._add_gap  # Faust's own, before install (tests compare)


async def add_gap_merging_once(consumer: Any, tp: Any, offset_from: int, offset_to: int) -> None:
    """Faust's ``Consumer._add_gap`` (offsets ``offset_from..offset_to`` the fetch passed), without
    rebuilding the partition's interval tree for a gap that begins at or after the tree's end.

    Faust adds each gap and then calls ``merge_overlaps``, which rebuilds the whole tree. On the topics
    the API writes in transactions every commit marker is a gap, so a worker rebuilt a tree of all the
    gaps since its last commit once per marker. Its share of the worker's CPU grew run after run in
    the webhook bench (5.9 % to 10.4 % of the samples; docs/benchmarks.md). The fetch moves forward,
    so a new gap almost always begins at or after the end of every gap before it. It can then
    overlap none of them (the intervals are half-open, and ``merge_overlaps`` merges only
    overlapping ones), and adding it leaves the tree exactly as merging would. A gap found again
    after a seek back is merged as Faust does."""
    committed = consumer._committed_offset[tp]
    gaps = consumer._gap[tp]
    if committed is not None:
        offset_from = max(offset_from, committed + 1)
    if offset_from > offset_to:
        return
    past_the_others = offset_from >= gaps.end()  # 0 for an empty tree
    gaps.addi(offset_from, offset_to + 1)  # intervaltree intervals exclude the end
    if not past_the_others:
        await asyncio.sleep(0)  # as Faust does: a large tree takes a while to merge
        gaps.merge_overlaps()


def contiguous_commits(settings: Settings) -> None:
    """2b and 2c: a commit of one of our topics never passes a hole."""
    global guard

    # Every topic of ours has contiguous offsets, except the config changes (compacted) and those the
    # API may write in transactions (publish, idempotency): each transaction leaves a commit marker
    # there, an offset no record fills, and a commit guarded as below would stop at the first one for
    # good. Faust's own rules commit past those; nothing is lost by it, because the agents reading
    # them (control, idempotency) keep their own next offset per partition in their table and never
    # trust the committed offset (streams/progress.py).
    gaps_allowed = {settings.topic(topics.CONFIG_CHANGES), *(settings.topic(name) for name in topics.TRANSACTIONAL)}

    def ours(topic: str) -> bool:
        return topic.startswith(settings.topic_prefix) and topic not in gaps_allowed

    guard = commit_guard = CommitGuard(ours)
    consumer_class = faust_consumer.Consumer
    new_offset, perform_seek = consumer_class._new_offset, consumer_class.perform_seek

    async def no_gap_in_our_topics(self: Any, tp: Any, offset_from: int, offset_to: int) -> None:
        if ours(tp.topic):
            log.warning(
                "consumer: %s[%d]: offsets %d..%d skipped by the fetch; not committed past",
                tp.topic,
                tp.partition,
                offset_from,
                offset_to - 1,
            )
            return
        await add_gap_merging_once(self, tp, offset_from, offset_to)

    def contiguous_new_offset(self: Any, tp: Any) -> int | None:
        return commit_guard.new_offset(self, tp, new_offset)

    async def remembering_perform_seek(self: Any) -> None:
        await perform_seek(self)
        commit_guard.seeked(dict(self._committed_offset))

    consumer_class._add_gap = no_gap_in_our_topics  # type: ignore[method-assign]
    consumer_class._new_offset = contiguous_new_offset  # type: ignore[method-assign]
    consumer_class.perform_seek = remembering_perform_seek  # type: ignore[method-assign]
