"""The control stage on whole fetches: the publish topic's
records, decided by the per-event pipeline (app/domain/pipeline.py) against the stage's own
changelog-backed RocksDB stores, and made durable by one checkpoint per batch
(:mod:`tables.batch_stage`: outputs and changelog sent and acknowledged, offsets committed, then
the local stores written).

Per record, the Python on the path is the decode, the topic's cached configuration, the state read
(this batch's, else the decoded-state cache, else RocksDB) and the decision; no event object, no
acknowledgement, no channel. Records are decided in their partition's order; outputs keep that
order within a source partition, so the sinks see an episode's NOTIFY before its RESOLVE.

Auto-resolve: a timer sends a tick keyed like each due state to the publish topic; it comes back
through the same path as an event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from aiokafka.structs import ConsumerRecord
from structlog.contextvars import bind_contextvars, reset_contextvars

from app.clock import now_ms
from app.domain.pipeline import StoredControl, process, reads_state, state_mirror
from app.kafka import topics
from app.kafka.producer_errors import PRODUCER_FATAL
from app.kafka.records import encode
from app.observability import trace_context, tracing, worker_spans
from app.observability.metrics import register_cache
from app.settings import Settings
from streams import decision_log
from streams.control_caches import DueIndex, StateCache
from streams.control_records import publish_record, request_of, tick_record
from streams.dead_letter import dead_letter_value, unreadable_state_value
from streams.outbox import chunks
from streams.resources import resources
from streams.stage_runner import StageSpec, run_stage
from tables.batch_stage import BatchStage, Checkpoint, Records
from tables.codecs import UnreadableValue, dump_control, load_control
from tables.partition_store import PartitionStore

log = logging.getLogger(__name__)
STAGE = "control"
clock: Callable[[], int] = now_ms  # the timers' clock; decisions use event time
_NO_SPAN = contextlib.nullcontext()


class ControlStage:
    """The handler of the control stage's batches, and what it keeps between them."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.publish = settings.topic(topics.PUBLISH)
        self.traces = settings.topic(topics.TRACES)
        self.incidents = settings.topic(topics.ACTIONS_INCIDENT)
        self.deliveries = {kind: settings.topic(name) for kind, name in topics.ACTIONS.items()}
        self.dead_letters = settings.topic(topics.DEAD_LETTER)
        self.due_index = DueIndex(settings.memory.control_due_window_size)
        self.state_cache = StateCache(settings.memory.control_state_cache_size)
        self.stage: BatchStage | None = None
        self.after_commit: dict[bytes, tuple[int, StoredControl]] = {}
        register_cache("control_due_window", self.due_index.window)
        register_cache("control_states", self.state_cache.items)
        register_cache("control_views", self.state_cache.views)

    async def __call__(self, records: Records, checkpoint: Checkpoint, stores: Mapping[int, PartitionStore]) -> None:
        assert self.stage is not None
        self.state_cache.check(self.stage.epoch)  # a partition that moved and came back: read it again
        decision_log.start_batch()
        outputs: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
        written: dict[bytes, tuple[int, StoredControl]] = {}
        mirrors: dict[bytes, tuple[dict[str, Any], dict[str, Any]]] = {}
        views = self.state_cache.views
        skipped = 0
        oldest = None
        for partition, batch in records.items():
            store = stores[partition]
            for rec in batch:
                try:
                    record = publish_record(rec.value)
                except (ValueError, KeyError, TypeError) as exc:
                    self._dead_letter(checkpoint, rec, f"undecodable publish record: {exc}")
                    continue
                if oldest is None or rec.timestamp < oldest:
                    oldest = rec.timestamp
                key = rec.key
                request = request_of(record)
                bound = bind_contextvars(event_id=record["id"], organization_id=record["organization_id"], **request)
                try:
                    cfg = await resources().topic_config(record["organization_id"], record["topic_id"])
                    stored = self._state_of(checkpoint, rec, store, written) if reads_state(cfg, record) else None
                    with self._decide_span(rec, record) if tracing.enabled else _NO_SPAN as span:
                        trace: dict[str, str] = {}
                        if span is not None:
                            record["trace_id"] = trace_context.trace_id_of(span)
                            trace = trace_context.item_fields(span)
                        done = process(
                            record, stored, cfg, key=key.decode(), offset=rec.offset, prior_view=views.get(key)
                        )
                        for decided, out in done.decided:
                            decision_log.observe_decision(decided, len(out.actions) + len(out.deliveries))
                            self._queue(out, partition, outputs, trace, request, checkpoint, rec)
                finally:
                    reset_contextvars(**bound)
                skipped += done.skipped
                if done.view is not None:
                    views[key] = done.view
                if done.stored is not None:
                    written[key] = (partition, done.stored)
                    if done.decided:
                        last, out = done.decided[-1]
                        mirrors[key] = (out.trace, last)
        for key, (event_trace, last) in mirrors.items():
            # the newest state of each key in this batch, for the control_state route (stored by the trace sink)
            event_trace["control_state"] = state_mirror(key.decode(), written[key][1], last)
        for (topic, partition), items in outputs.items():
            for value in chunks([orjson.dumps(item) for item in items]):
                checkpoint.send(topic, value, partition=partition)
        for key, (partition, stored) in written.items():
            checkpoint.put(partition, key, dump_control(stored))
        decision_log.flush_decision_log()
        self._log_lag(sum(len(b) for b in records.values()), oldest)
        if skipped:
            log.info("control: %d redelivered records were applied before and are skipped", skipped)
        self.after_commit = written

    def committed(self) -> None:
        """After the batch's commit: the caches learn the states it wrote."""
        for key, (_partition, stored) in self.after_commit.items():
            self.due_index.update(key, stored.due_ms)
            self.state_cache.put(key, stored)
        self.after_commit = {}

    def _state_of(
        self,
        checkpoint: Checkpoint,
        rec: ConsumerRecord[bytes, bytes],
        store: PartitionStore,
        written: dict[bytes, tuple[int, StoredControl]],
    ) -> StoredControl | None:
        """The state of the record's key as this batch left it, else as cached, else as stored; an
        unreadable one is dead-lettered with the reason and the key starts from empty state."""
        key = rec.key
        pending = written.get(key)
        if pending is not None:
            return pending[1]
        cached = self.state_cache.items.get(key)
        if cached is not None:
            return cached
        raw = store.get(key)
        try:
            return load_control(raw)
        except UnreadableValue as exc:
            assert raw is not None
            value = unreadable_state_value("control", key, raw, rec.partition, rec.offset, str(exc))
            checkpoint.send(self.dead_letters, value, key=key)
            return None

    def _queue(
        self,
        out: Any,
        partition: int,
        outputs: dict[tuple[str, int], list[dict[str, Any]]],
        trace: dict[str, str],
        request: dict[str, str],
        checkpoint: Checkpoint,
        rec: ConsumerRecord[bytes, bytes],
    ) -> None:
        for action in out.actions:
            action.update(trace)
            action.update(request)
            outputs[(self.incidents, partition)].append(action)
        for kind, item in out.deliveries:
            item.update(trace)
            item.update(request)
            outputs[(self.deliveries[kind], partition)].append(item)
        outputs[(self.traces, partition)].append(out.trace)
        for reason in out.dead_letters:
            self._dead_letter(checkpoint, rec, reason, stage="workflow")

    def _dead_letter(
        self, checkpoint: Checkpoint, rec: ConsumerRecord[bytes, bytes], reason: str, stage: str = STAGE
    ) -> None:
        value = dead_letter_value(stage, rec.topic, rec.partition, rec.offset, rec.value, reason)
        checkpoint.send(self.dead_letters, value, key=rec.key)

    def _decide_span(self, rec: ConsumerRecord[bytes, bytes], record: dict[str, Any]) -> Any:
        parent = worker_spans.context_from_headers(rec.headers)
        if parent is None:
            return _NO_SPAN
        attributes = {
            "tocsin.event_id": record["id"],
            "tocsin.organization_id": record["organization_id"],
            "tocsin.topic_id": record["topic_id"],
            "messaging.kafka.offset": rec.offset,
            "messaging.destination.partition.id": str(rec.partition),
        }
        return worker_spans.child_span("decide", parent, "consumer", attributes)

    _lag_logged = 0.0

    def _log_lag(self, n: int, oldest: int | None) -> None:
        """Every 5 s: how far behind acceptance the stage is (the oldest record of a batch)."""
        now = time.time()
        if oldest is None or now - self._lag_logged < 5:
            return
        self._lag_logged = now
        log.info("control: batch=%d behind=%.0fms", n, now * 1000 - oldest)

    async def ticks(self) -> None:
        """Every TOCSIN_CONTROL_TICK_SECONDS: a tick for every state of this worker's partitions whose
        auto-resolve time has come."""
        due_for: tuple[int, frozenset[int]] | None = None
        while True:
            await asyncio.sleep(self.settings.control_tick_seconds)
            stage = self.stage
            if stage is None or not stage.ready():
                continue
            stores = dict(stage.stores)

            def items(stores: dict[int, PartitionStore] = stores) -> Any:
                return (item for store in stores.values() for item in store.items())

            try:
                if (stage.epoch, stage.assigned) != due_for:  # every rebalance: the states may have changed hands
                    due_for = (stage.epoch, stage.assigned)
                    log.info("control: active partitions %s", sorted(stores))
                    self.due_index.rebuild(frozenset(stores), items())
                now = clock()
                for key in self.due_index.take_due(now, items):
                    producer = stage.producer
                    try:
                        await producer.send(self.publish, encode(tick_record(key, now)), key=key)
                    except PRODUCER_FATAL:
                        await stage.renew_producer(producer)  # the tick is sent again in 30 s (DueIndex)
            except Exception as exc:  # noqa: BLE001 - a tick not sent is sent again; the timer goes on
                log.warning("control: auto-resolve ticks failed, trying again: %r", exc)


def control_spec(settings: Settings) -> StageSpec:
    """The control stage: the publish topic, its states in the control changelog, the auto-resolve ticks."""
    handler = ControlStage(settings)
    return StageSpec(
        STAGE,
        topics.PUBLISH,
        handler,
        changelog=topics.CONTROL_CHANGELOG,
        max_records=settings.control_batch_size,
        fetch_seconds=settings.control_batch_seconds,
        background=[lambda _stage: handler.ticks()],
    )


async def run_control_stage(settings: Settings) -> None:
    """The control stage of this worker process, until cancelled."""
    await run_stage(settings, control_spec(settings))
