"""Idempotency stage: publishes that carry ``attributes.idempotency_key`` arrive here keyed by
organization/topic/key (whatever their partition key), and only the first of each key within
the retention is forwarded to the publish topic, re-keyed by its control state. A repeat is
dropped and traced as a duplicate of the first event id.

Crash safety follows the control agent: forward, wait for the broker's acknowledgement, then
write the key with the offset of the record; a redelivered record at or below that offset was
forwarded already. Retention without an unbounded table: each partition keeps, in memory, its
keys in event-time order (rebuilt from the table when the assignment changes), and a batch
deletes the keys of its partitions that are older than the retention (event time of the batch).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from app.domain.workflows.workflow_stage import accepted_step, trace_record
from app.kafka.app import app, idempotency_topic, publish_topic, settings, traces_topic
from app.kafka.partitioner import KeyPartitioner
from app.kafka.records import decode, encode
from app.observability import tracing, worker_spans
from app.observability.metrics import register_cache
from streams.batches import process_until_done
from streams.control_caches import TimeWindow
from streams.dead_letter import send_dead_letter, send_unreadable_state
from streams.outbox import Outbox
from streams.progress import Admit, PartitionProgress, applicable, dead_letter_and_pass
from tables.codecs import StoredKey, UnreadableValue, dump_key, is_progress_key, load_key
from tables.control import idempotency_keys
from tables.control import worker_consumer as source

log = logging.getLogger(__name__)
_partitioner = KeyPartitioner()


class Expiry:
    """Per partition, the stored keys with the earliest event times (a bounded
    :class:`~streams.control_caches.TimeWindow` each, TOCSIN_IDEMPOTENCY_EXPIRY_WINDOW_SIZE shared
    by the assigned partitions); the keys beyond a window are found again by a scan of the table
    once its horizon passes the retention cutoff."""

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self.windows: dict[int, TimeWindow] = {}
        self.assignment: frozenset[int] | None = None
        self.evicted = 0  # by the windows of earlier assignments

    @property
    def maxsize(self) -> int:
        """The bound of all windows together: ``size``, unless more partitions than ``size / 2`` are assigned."""
        return sum(w.size for w in self.windows.values()) or self.size

    def _each(self, partitions: int) -> int:
        return max(2, self.size // max(1, partitions))

    @property
    def evictions(self) -> int:
        return self.evicted + sum(w.evictions for w in self.windows.values())

    def __len__(self) -> int:
        return sum(len(w) for w in self.windows.values())

    def rebuild(self, assignment: frozenset[int], items: Any, partitions: int) -> None:
        self.evicted = self.evictions
        each = self._each(len(assignment))
        self.windows = {p: TimeWindow(each) for p in assignment}
        by_partition: dict[int, list[tuple[bytes, int]]] = {p: [] for p in assignment}
        everything = list(range(partitions))
        for key, raw in items:
            if is_progress_key(key):
                continue
            try:
                stored = load_key(raw)
            except UnreadableValue as exc:  # dead-lettered when the agent next reads it
                log.warning("idempotency: no expiry for key %r: %s", key.decode("utf-8", "replace"), exc)
                continue
            partition = _partitioner(key, everything, everything)
            if stored is not None and partition in by_partition:
                by_partition[partition].append((key, stored.at_ms))
        for partition, window in self.windows.items():
            window.reset(by_partition[partition])
        self.assignment = assignment

    def add(self, partition: int, at_ms: int, key: bytes) -> None:
        window = self.windows.get(partition)
        if window is None:
            window = self.windows[partition] = TimeWindow(self._each(len(self.windows) + 1))
        window.set(key, at_ms)

    def expired(self, partition: int, cutoff_ms: int) -> list[tuple[int, bytes]]:
        window = self.windows.get(partition)
        return [] if window is None else window.pop_due(cutoff_ms)

    def needs_scan(self, partition: int, cutoff_ms: int) -> bool:
        """Keys beyond ``partition``'s window may be past the cutoff: :meth:`rebuild` finds them."""
        window = self.windows.get(partition)
        return window is not None and window.needs_scan(cutoff_ms)


expiry = Expiry(settings.memory.idempotency_expiry_window_size)
register_cache("idempotency_expiry_window", expiry)


def retention_ms() -> int:
    return int(settings.idempotency_retention_hours * 3_600_000)


@app.agent(idempotency_topic)
async def idempotency(stream: Any) -> None:
    async for events in stream.take_events(settings.control_batch_size, within=settings.control_batch_seconds):
        await process_until_done("idempotency", process_batch, events, skip_record)


progress = PartitionProgress("idempotency", source.non_records_of(idempotency_topic))


def _stored_progress() -> tuple[int, int] | None:
    return idempotency_keys.progress()


skip_record = partial(dead_letter_and_pass, "idempotency", progress, idempotency_keys)


async def read_key(event: Any, key: bytes) -> StoredKey | None:
    """The stored idempotency key; an unreadable one is dead-lettered and counts as absent."""
    raw = idempotency_keys.get(key)
    try:
        return load_key(raw)
    except UnreadableValue as exc:
        assert raw is not None
        await send_unreadable_state("idempotency", event, key, raw, str(exc))
        return None


async def process_batch(events: list[Any]) -> None:
    """Apply a batch, as one the tables' recovery waits for (streams/progress.py: what is held back)."""
    async with source.applying():
        await _apply_batch(applicable("idempotency", events, idempotency_topic))


async def _apply_batch(events: list[Any]) -> None:
    progress.start_batch(source.generation())
    assignment = source.active_partitions(idempotency_topic)
    if assignment != expiry.assignment:
        expiry.rebuild(assignment, idempotency_keys.items(), settings.publish_partitions)
    outbox = Outbox()
    forwards: list[tuple[bytes, bytes, int, Any]] = []
    written: dict[bytes, tuple[Any, StoredKey]] = {}
    last_event: dict[int, tuple[Any, int]] = {}
    window = retention_ms()
    for event in events:
        source.use_event(event)
        if progress.admit(event, _stored_progress) is not Admit.APPLY:
            continue
        partition, offset, key = event.message.partition, event.message.offset, event.key
        try:
            record = decode(event.value)
            event_id, at_ms = str(record["id"]), int(record["accepted_ms"])
            state_key = str(record.pop("state_key")).encode()
            idem = str(record["attributes"]["idempotency_key"])
        except (ValueError, KeyError, TypeError) as exc:
            await send_dead_letter("idempotency", event, f"undecodable publish record: {exc}")
            continue
        last_event[partition] = (event, max(at_ms, last_event.get(partition, (None, 0))[1]))
        pending = written.get(key)
        stored = pending[1] if pending is not None else await read_key(event, key)
        if stored is not None and stored.event_id == event_id and offset <= stored.offset:
            continue  # forwarded before the worker stopped
        if stored is not None and at_ms - stored.at_ms < window:
            outbox.add(traces_topic, partition, _duplicate_trace(record, idem, stored))
            continue
        record["idempotency"] = {"key": idem, "outcome": "first"}
        # with tracing on, the forwarded record keeps the publish request's traceparent
        forwards.append(
            (state_key, encode(record), at_ms, worker_spans.forwarded(event.headers) if tracing.enabled else None)
        )
        written[key] = (event, StoredKey(event_id, at_ms, offset))
    for state_key, value, at_ms, headers in forwards:
        outbox.pending.append(
            await publish_topic.send(key=state_key, value=value, timestamp=at_ms / 1000, headers=headers)
        )
    await outbox.deliver()
    keys = [(event, key, dump_key(stored)) for key, (event, stored) in written.items()]
    await idempotency_keys.write(keys + progress.markers())
    progress.batch_written()
    for key, (event, stored) in written.items():
        expiry.add(event.message.partition, stored.at_ms, key)
    _expire(last_event, window)
    for partition, offset in progress.seeks_due().items():
        if not await source.seek_back(idempotency_topic, partition, offset):
            progress.forget(partition)


def _expire(last_event: dict[int, tuple[Any, int]], window: int) -> None:
    """Delete the keys of the batch's partitions whose retention has passed (by event time)."""
    removed = 0
    for partition, (event, newest_ms) in last_event.items():
        source.use_event(event)
        cutoff = newest_ms - window
        removed += _delete_expired(expiry.expired(partition, cutoff))
        while expiry.needs_scan(partition, cutoff):  # keys beyond the in-memory window have expired too
            assignment = source.active_partitions(idempotency_topic)
            expiry.rebuild(assignment, idempotency_keys.items(), settings.publish_partitions)
            source.use_event(event)
            removed += _delete_expired(expiry.expired(partition, cutoff))
    if removed:
        log.info("idempotency: %d keys past their retention removed", removed)


def _delete_expired(entries: list[tuple[int, bytes]]) -> int:
    """Delete the keys of ``entries`` still stored with that event time (the current event's partition)."""
    removed = 0
    for at_ms, key in entries:
        try:
            stored = load_key(idempotency_keys.get(key))
        except UnreadableValue:
            stored = None  # dead-lettered when the agent read it for an event
        if stored is not None and stored.at_ms == at_ms:
            idempotency_keys.delete(key)
            removed += 1
    return removed


def _duplicate_trace(record: dict[str, Any], idem: str, first: StoredKey) -> dict[str, Any]:
    step = {"step": "idempotency", "detail": {"key": idem, "outcome": "duplicate", "duplicate_of": first.event_id}}
    return trace_record(record, [accepted_step(record), step])
