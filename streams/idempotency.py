"""Idempotency stage: publishes that carry ``attributes.idempotency_key`` arrive here keyed by
organization/topic/status/key (whatever their partition key), and only the first of each key within
the retention is forwarded to the publish topic, re-keyed by its control state. A repeat is
dropped and traced as a duplicate of the first event id.

A batch stage with state (tables/batch_stage.py): the keys live in the stage's stores over the
idempotency changelog, and one checkpoint per fetch sends the forwarded records and the duplicate
traces, then the keys' changelog records, then commits the offsets. A record redelivered after a
kill between the sends and the commit is at or below its key's stored offset: forwarded already,
not again. Retention without an unbounded store: each partition keeps, in memory, its keys in
event-time order (rebuilt from the stores when the assignment changes or a batch failed), and a
batch deletes the keys of its partitions that are older than the retention (event time of the
batch).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson
from aiokafka.structs import ConsumerRecord

from app.domain.workflows.workflow_stage import accepted_step, trace_record
from app.kafka import topics
from app.kafka.records import decode, encode
from app.observability import tracing, worker_spans
from app.observability.metrics import register_cache
from app.settings import Settings
from streams.control_caches import TimeWindow
from streams.dead_letter import dead_letter_value, unreadable_state_value
from streams.outbox import chunks
from streams.stage_runner import StageSpec
from tables.batch_stage import BatchStage, Checkpoint, Records
from tables.codecs import StoredKey, UnreadableValue, dump_key, is_progress_key, load_key
from tables.partition_store import PartitionStore

log = logging.getLogger(__name__)
STAGE = "idempotency"


class Expiry:
    """Per partition, the stored keys with the earliest event times (a bounded
    :class:`~streams.control_caches.TimeWindow` each, TOCSIN_IDEMPOTENCY_EXPIRY_WINDOW_SIZE shared
    by the assigned partitions); the keys beyond a window are found again by a scan of the table
    once its horizon passes the retention cutoff."""

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self.windows: dict[int, TimeWindow] = {}
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

    def rebuild(self, items: Mapping[int, Iterable[tuple[bytes, bytes]]]) -> None:
        """The windows of the partitions of ``items`` (each partition's stored keys and values)."""
        self.evicted = self.evictions
        each = self._each(len(items))
        self.windows = {}
        for partition, pairs in items.items():
            entries = []
            for key, raw in pairs:
                if is_progress_key(key):
                    continue
                try:
                    stored = load_key(raw)
                except UnreadableValue as exc:  # dead-lettered when the stage next reads it
                    log.warning("idempotency: no expiry for key %r: %s", key.decode("utf-8", "replace"), exc)
                    continue
                if stored is not None:
                    entries.append((key, stored.at_ms))
            window = self.windows[partition] = TimeWindow(each)
            window.reset(entries)

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


def _live(store: PartitionStore, changes: Mapping[bytes, bytes | None]) -> Iterator[tuple[bytes, bytes]]:
    """``store``'s keys and values with a batch's pending ``changes`` applied (None deletes)."""
    for key, value in store.items():
        if key in changes:
            changed = changes[key]
            if changed is not None:
                yield key, changed
        else:
            yield key, value


def _duplicate_trace(record: dict[str, Any], idem: str, first: StoredKey) -> dict[str, Any]:
    step = {"step": "idempotency", "detail": {"key": idem, "outcome": "duplicate", "duplicate_of": first.event_id}}
    return trace_record(record, [accepted_step(record), step])


class IdempotencyStage:
    """The handler of the idempotency stage's batches, and the retention windows between them."""

    def __init__(self, settings: Settings) -> None:
        self.publish = settings.topic(topics.PUBLISH)
        self.traces = settings.topic(topics.TRACES)
        self.dead_letters = settings.topic(topics.DEAD_LETTER)
        self.window_ms = int(settings.idempotency_retention_hours * 3_600_000)
        self.expiry = Expiry(settings.memory.idempotency_expiry_window_size)
        self.stage: BatchStage | None = None
        self.built_in: int | None = None  # the stage epoch the windows hold; None: build them again
        self.batch_epoch = 0
        self.after_commit: list[tuple[int, int, bytes]] = []
        register_cache("idempotency_expiry_window", self.expiry)

    async def __call__(self, records: Records, checkpoint: Checkpoint, stores: Mapping[int, PartitionStore]) -> None:
        epoch = self.stage.epoch if self.stage is not None else 0
        if self.built_in != epoch:  # a new assignment, or the last batch did not commit
            self.expiry.rebuild({p: store.items() for p, store in stores.items()})
        # until this batch commits (committed()): its expired keys left the windows already
        self.built_in, self.batch_epoch = None, epoch
        written: dict[bytes, tuple[int, StoredKey]] = {}
        traces: dict[int, list[bytes]] = defaultdict(list)
        newest: dict[int, int] = {}
        for partition, batch in records.items():
            store = stores[partition]
            for rec in batch:
                self._record(rec, store, checkpoint, written, traces, newest)
        for partition, items in traces.items():
            for value in chunks(items):
                checkpoint.send(self.traces, value, partition=partition)
        for key, (partition, stored) in written.items():
            checkpoint.put(partition, key, dump_key(stored))
        self._expire(newest, stores, written, checkpoint)
        self.after_commit = [(partition, stored.at_ms, key) for key, (partition, stored) in written.items()]

    def _record(
        self,
        rec: ConsumerRecord[bytes, bytes],
        store: PartitionStore,
        checkpoint: Checkpoint,
        written: dict[bytes, tuple[int, StoredKey]],
        traces: dict[int, list[bytes]],
        newest: dict[int, int],
    ) -> None:
        partition, offset, key = rec.partition, rec.offset, rec.key
        try:
            record = decode(rec.value)
            event_id, at_ms = str(record["id"]), int(record["accepted_ms"])
            state_key = str(record.pop("state_key")).encode()
            idem = str(record["attributes"]["idempotency_key"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            value = dead_letter_value(
                STAGE, rec.topic, partition, offset, rec.value, f"undecodable publish record: {exc}"
            )
            checkpoint.send(self.dead_letters, value, key=key)
            return
        newest[partition] = max(at_ms, newest.get(partition, at_ms))
        pending = written.get(key)
        stored = pending[1] if pending is not None else self._read(rec, store, checkpoint)
        if stored is not None and stored.event_id == event_id and offset <= stored.offset:
            return  # forwarded before the worker stopped
        if stored is not None and at_ms - stored.at_ms < self.window_ms:
            traces[partition].append(orjson.dumps(_duplicate_trace(record, idem, stored)))
            return
        record["idempotency"] = {"key": idem, "outcome": "first"}
        # with tracing on, the forwarded record keeps the publish request's traceparent
        headers = worker_spans.forwarded(rec.headers) if tracing.enabled else None
        checkpoint.send(self.publish, encode(record), key=state_key, timestamp_ms=at_ms, headers=headers)
        written[key] = (partition, StoredKey(event_id, at_ms, offset))

    def _read(
        self, rec: ConsumerRecord[bytes, bytes], store: PartitionStore, checkpoint: Checkpoint
    ) -> StoredKey | None:
        """The stored key; an unreadable one is dead-lettered and counts as absent."""
        raw = store.get(rec.key)
        try:
            return load_key(raw)
        except UnreadableValue as exc:
            assert raw is not None
            value = unreadable_state_value(STAGE, rec.key, raw, rec.partition, rec.offset, str(exc))
            checkpoint.send(self.dead_letters, value, key=rec.key)
            return None

    def _expire(
        self,
        newest: dict[int, int],
        stores: Mapping[int, PartitionStore],
        written: dict[bytes, tuple[int, StoredKey]],
        checkpoint: Checkpoint,
    ) -> None:
        """Delete the keys of the batch's partitions whose retention has passed (by event time)."""
        removed = 0
        for partition, newest_ms in newest.items():
            cutoff = newest_ms - self.window_ms
            store = stores[partition]
            removed += self._delete(partition, self.expiry.expired(partition, cutoff), store, written, checkpoint)
            while self.expiry.needs_scan(partition, cutoff):  # keys beyond the in-memory window have expired too
                # the stores as this batch leaves them: the keys it deleted are not found again
                self.expiry.rebuild({p: _live(s, checkpoint.changes.get(p, {})) for p, s in stores.items()})
                found = self._delete(partition, self.expiry.expired(partition, cutoff), store, written, checkpoint)
                removed += found
                if not found:  # nothing left past the cutoff that this batch may delete
                    break
        if removed:
            log.info("idempotency: %d keys past their retention removed", removed)

    @staticmethod
    def _delete(
        partition: int,
        entries: list[tuple[int, bytes]],
        store: PartitionStore,
        written: dict[bytes, tuple[int, StoredKey]],
        checkpoint: Checkpoint,
    ) -> int:
        """Delete the keys of ``entries`` still stored with that event time (not one this batch wrote)."""
        removed = 0
        deleted = checkpoint.changes.get(partition, {})
        for at_ms, key in entries:
            if key in written or (key in deleted and deleted[key] is None):
                continue
            try:
                stored = load_key(store.get(key))
            except UnreadableValue:
                stored = None  # dead-lettered when the stage reads it for an event
            if stored is not None and stored.at_ms == at_ms:
                checkpoint.put(partition, key, None)
                removed += 1
        return removed

    def committed(self) -> None:
        """After the batch's commit: the windows learn its keys."""
        for partition, at_ms, key in self.after_commit:
            self.expiry.add(partition, at_ms, key)
        self.after_commit = []
        self.built_in = self.batch_epoch


def idempotency_spec(settings: Settings) -> StageSpec:
    """The idempotency stage: the idempotency topic, its keys in the idempotency changelog."""
    return StageSpec(
        STAGE,
        topics.IDEMPOTENCY,
        IdempotencyStage(settings),
        changelog=topics.IDEMPOTENCY_CHANGELOG,
        max_records=settings.control_batch_size,
        fetch_seconds=settings.control_batch_seconds,
    )
