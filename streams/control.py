"""Control agent: decode each publish record, read its state, run it through the per-event
pipeline (app/domain/pipeline.py: event-control policy, then the workflow stage), send the
batch's outputs, then write the states.

Order within a batch (crash safety without transactions):
1. decide every event against the stored state (or the state this batch already produced);
2. send the outputs (incident actions, traces) and wait for the broker's acknowledgement;
3. only then write the new states to the table (RocksDB + changelog), each carrying the offset
   of the last record applied to it.
A worker killed anywhere in between redelivers the batch: a record whose state was not written
is decided again from the same state and gives the same outputs (deduplicated downstream on
their effect ids); a record at or below its state's offset was applied and its outputs were
delivered before the state was written, so it is skipped. No NOTIFY is lost or doubled.

Ticks (auto-resolve) arrive on the publish topic keyed like the state, from the timer below,
and go through the same path as an event.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping, MutableMapping
from functools import partial
from typing import Any

from structlog.contextvars import bind_contextvars, reset_contextvars

from app.clock import now_ms
from app.domain.pipeline import Processed, StoredControl, process, reads_state, state_mirror
from app.domain.workflows.workflow_stage import WorkflowOutputs
from app.kafka.app import action_topics, app, incident_actions_topic, publish_topic, settings, traces_topic
from app.kafka.records import encode
from app.observability import trace_context, tracing, worker_spans
from app.observability.metrics import register_cache
from streams import decision_log
from streams.batches import process_until_done
from streams.control_caches import DueIndex, StateCache
from streams.control_records import publish_record, request_of, tick_record
from streams.dead_letter import send_dead_letter, send_unreadable_state
from streams.outbox import Outbox
from streams.progress import Admit, PartitionProgress, applicable, dead_letter_and_pass
from streams.resources import resources
from tables.codecs import UnreadableValue, dump_control, load_control
from tables.control import control_states
from tables.control import worker_consumer as source

log = logging.getLogger(__name__)


# The timers' clock (tests inject another); decisions never read it: they use event time.
clock: Callable[[], int] = now_ms

due_index = DueIndex(settings.memory.control_due_window_size)
state_cache = StateCache(settings.memory.control_state_cache_size)
register_cache("control_due_window", due_index.window)
register_cache("control_states", state_cache.items)
register_cache("control_views", state_cache.views)
progress = PartitionProgress("control", source.non_records_of(publish_topic))


@app.agent(publish_topic)
async def control(stream: Any) -> None:
    async for events in stream.take_events(settings.control_batch_size, within=settings.control_batch_seconds):
        await process_until_done("control", process_batch, events, skip_record)


_lag_logged = [0.0]


def _log_lag(events: list[Any]) -> None:
    """Every 5 s: how far behind acceptance the control agent is (the oldest record of a batch)."""
    now = time.time()
    if now - _lag_logged[0] < 5 or not events:
        return
    _lag_logged[0] = now
    oldest = min(e.message.timestamp for e in events)  # the acceptance time, set by the API
    log.info("control: batch=%d behind=%.0fms", len(events), (now - oldest) * 1000)


async def process_batch(events: list[Any]) -> None:
    """Apply a batch, as one the tables' recovery waits for (streams/progress.py: what is held back)."""
    async with source.applying():
        await _apply_batch(applicable("control", events, publish_topic))


async def _apply_batch(events: list[Any]) -> None:
    _log_lag(events)
    batch_generation = source.generation()
    state_cache.check(batch_generation)
    progress.start_batch(batch_generation)
    decision_log.start_batch()
    outbox = Outbox()
    written: dict[bytes, tuple[Any, StoredControl]] = {}
    mirrors: dict[bytes, tuple[dict[str, Any], dict[str, Any]]] = {}  # key → (its last trace, its record)
    views = state_cache.views
    skipped = 0
    for event in events:
        source.use_event(event)  # table reads and writes use the current event's partition
        if progress.admit(event, _stored_progress) is not Admit.APPLY:
            continue
        record = await _decoded(event)
        if record is None:
            continue
        bound = bind_contextvars(event_id=record["id"], organization_id=record["organization_id"], **request_of(record))
        try:
            done = await _decide(event, record, written, views, outbox)
        finally:
            reset_contextvars(**bound)
        key = event.key
        skipped += done.skipped
        if done.view is not None:
            views[key] = done.view
        if done.stored is not None:
            written[key] = (event, done.stored)
            if done.decided:
                rec, outputs = done.decided[-1]
                mirrors[key] = (outputs.trace, rec)
    await _deliver_and_write(outbox, written, mirrors)
    skipped += progress.skipped
    if skipped:
        log.info("control: %d redelivered records were applied before the restart and are skipped", skipped)


_NO_SPAN = contextlib.nullcontext()


async def _decide(
    event: Any,
    record: dict[str, Any],
    written: dict[bytes, tuple[Any, StoredControl]],
    views: MutableMapping[bytes, Any],
    outbox: Outbox,
) -> Processed:
    """Decide one record and queue its outputs; with tracing on, in a ``decide`` span continuing
    the publish request's (the record's traceparent), whose id goes into the event's trace and
    whose traceparent (and tracestate) go with each delivery and incident item."""
    cfg = await resources().topic_config(record["organization_id"], record["topic_id"])
    key = event.key
    stored = await _state_of(event, key, written) if reads_state(cfg, record) else None
    with _decide_span(event, record) if tracing.enabled else _NO_SPAN as span:
        trace: dict[str, str] = {}
        if span is not None:
            record["trace_id"] = trace_context.trace_id_of(span)
            trace = trace_context.item_fields(span)
        done = process(record, stored, cfg, key=key.decode(), offset=event.message.offset, prior_view=views.get(key))
        for rec, outputs in done.decided:
            decision_log.observe_decision(rec, len(outputs.actions) + len(outputs.deliveries))
            await _queue(outputs, event.message.partition, outbox, event, trace, request_of(record))
    return done


def _decide_span(event: Any, record: dict[str, Any]) -> contextlib.AbstractContextManager[Any]:
    parent = worker_spans.context_from_headers(event.headers)
    if parent is None:  # published untraced (TOCSIN_TRACE_SAMPLE_RATIO), or a tick: nothing to continue
        return _NO_SPAN
    attributes = {
        "tocsin.event_id": record["id"],
        "tocsin.organization_id": record["organization_id"],
        "tocsin.topic_id": record["topic_id"],
        "messaging.kafka.offset": event.message.offset,
        "messaging.destination.partition.id": str(event.message.partition),
    }
    return worker_spans.child_span("decide", parent, "consumer", attributes)


async def _deliver_and_write(
    outbox: Outbox,
    written: dict[bytes, tuple[Any, StoredControl]],
    mirrors: dict[bytes, tuple[dict[str, Any], dict[str, Any]]],
) -> None:
    """Send the batch's outputs and wait for the broker, then write the states (module docstring)."""
    for key, (trace, rec) in mirrors.items():
        # The newest state of each key in this batch, for the control_state route (stored by the trace sink).
        trace["control_state"] = state_mirror(key.decode(), written[key][1], rec)
    decision_log.flush_decision_log()
    await outbox.deliver()
    states = [(event, key, dump_control(stored)) for key, (event, stored) in written.items()]
    await control_states.write(states + progress.markers())
    progress.batch_written()
    for key, (_event, stored) in written.items():
        due_index.update(key, stored.due_ms)
        state_cache.put(key, stored)
    for partition, offset in progress.seeks_due().items():
        if not await source.seek_back(publish_topic, partition, offset):
            progress.forget(partition)


async def _decoded(event: Any) -> dict[str, Any] | None:
    """The publish record of ``event``; None when it does not decode (it is dead-lettered)."""
    try:
        record = publish_record(event.value)
    except (ValueError, KeyError, TypeError) as exc:
        await send_dead_letter("control", event, f"undecodable publish record: {exc}")
        return None
    return record


async def _state_of(event: Any, key: bytes, written: dict[bytes, tuple[Any, StoredControl]]) -> StoredControl | None:
    """The state of ``key`` as this batch left it, else as this worker last wrote it, else as stored."""
    pending = written.get(key)
    if pending is not None:
        return pending[1]
    stored = state_cache.items.get(key)
    return stored if stored is not None else await read_state(event, key)


def _stored_progress() -> tuple[int, int] | None:
    return control_states.progress()


skip_record = partial(dead_letter_and_pass, "control", progress, control_states)


async def read_state(event: Any, key: bytes) -> StoredControl | None:
    """The stored state of ``key`` (the current event's partition); an unreadable one is
    dead-lettered with the reason and the key starts from empty state."""
    raw = control_states.get(key)
    try:
        return load_control(raw)
    except UnreadableValue as exc:
        assert raw is not None
        await send_unreadable_state("control", event, key, raw, str(exc))
        return None


async def _queue(
    outputs: WorkflowOutputs,
    partition: int,
    outbox: Outbox,
    event: Any,
    trace: Mapping[str, str] | None = None,
    request: dict[str, str] | None = None,
) -> None:
    """Queue what one decided record asks to send; dead-letter what its workflows could not run.
    With tracing on, each incident and delivery item carries the decision span's trace fields
    (``trace``: trace_context.item_fields); each carries the publish request's id (``request``) for the
    lines about it."""
    for action in outputs.actions:
        if trace:
            action.update(trace)
        if request:
            action.update(request)
        outbox.add(incident_actions_topic, partition, action)
    for kind, item in outputs.deliveries:
        if trace:
            item.update(trace)
        if request:
            item.update(request)
        outbox.add(action_topics[kind], partition, item)
    outbox.add(traces_topic, partition, outputs.trace)
    for reason in outputs.dead_letters:
        await send_dead_letter("workflow", event, reason)


@app.timer(interval=settings.control_tick_seconds)  # type: ignore[untyped-decorator]  # faust ships no type hints
async def auto_resolve_ticks() -> None:
    """Send a tick for every state of this worker's partitions whose auto-resolve time has come."""
    assignment = source.active_partitions(publish_topic)
    if assignment != due_index.assignment:
        log.info("control: active partitions %s", sorted(assignment))
        due_index.rebuild(assignment, control_states.items())
    now = clock()
    for key in due_index.take_due(now, control_states.items):
        await publish_topic.send(key=key, value=encode(tick_record(key, now)))
