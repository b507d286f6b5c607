"""Control agent: apply each publish's event-control policy to its state, run the workflow
stage, send the batch's outputs, then write the states.

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

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from app.domain.control import (
    POLICY_TYPE_CHANGED_KEY,
    ControlDecision,
    ControlEvent,
    ControlState,
    Outcome,
    Policy,
    PolicyType,
    decide,
    end_for_policy_change,
    joined,
    tick,
)
from app.domain.ids import new_id
from app.kafka.app import action_topics, app, incident_actions_topic, publish_topic, settings, traces_topic
from app.kafka.records import decode, encode
from app.observability import logfmt, metrics
from streams.batches import process_until_done
from streams.dead_letter import send_dead_letter, send_unreadable_state
from streams.outbox import Outbox
from streams.progress import Admit, PartitionProgress, dead_letter_and_pass
from streams.resources import resources
from streams.workflow import WorkflowOutputs, episode_key, run_workflows
from tables.codecs import StoredControl, UnreadableValue, dump_control, is_progress_key, load_control
from tables.control import (
    active_partitions,
    control_states,
    generation,
    read_progress,
    read_value,
    seek_back,
    use_event,
    write_values,
)

log = logging.getLogger(__name__)


def _now_ms() -> int:
    return int(time.time() * 1000)


# The timers' clock (tests inject another); decisions never read it: they use event time.
clock: Callable[[], int] = _now_ms


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


due_index = DueIndex()


class StateCache:
    """Decoded states this worker wrote, so a key seen again skips the RocksDB read and the
    decode. Valid only within one assignment: every rebalance (Faust counts them) empties it,
    since a partition may have moved and come back with another worker's writes."""

    def __init__(self, size: int = 200_000) -> None:
        self.size = size
        self.items: dict[bytes, StoredControl] = {}
        # key → (a state, its view as traced): the "after" of a key's last record is the "before" of its next
        self.views: dict[bytes, tuple[ControlState, dict[str, Any]]] = {}
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


state_cache = StateCache()


progress = PartitionProgress("control")


_policies: dict[int, tuple[Any, Policy]] = {}


def policy_of(cfg: Any) -> Policy:
    """The policy of a topic configuration, parsed once per loaded configuration."""
    if cfg is None:
        return Policy()
    cached = _policies.get(id(cfg))
    if cached is not None and cached[0] is cfg:
        return cached[1]
    if len(_policies) > 10_000:
        _policies.clear()
    policy = Policy.from_profile(cfg.spec.get("control_policy_profile"), cfg.spec.get(POLICY_TYPE_CHANGED_KEY))
    _policies[id(cfg)] = (cfg, policy)
    return policy


def control_event(record: dict[str, Any]) -> ControlEvent:
    ec = record.get("event_control") or {}
    return ControlEvent(
        at_ms=int(record["accepted_ms"]),
        metrics={str(k): float(v) for k, v in (ec.get("metrics") or {}).items()},
        areas=tuple(str(a) for a in ec.get("areas") or ()),
    )


def state_view(state: ControlState, policy: Policy) -> dict[str, Any]:
    """The state as the trace and the control_state route show it."""
    hold_ms = int(policy.peak_hold_minutes * 60_000)
    return {
        "policy_type": state.policy_type,
        "episode_open": state.episode_open,
        "episode_seq": state.episode_seq,
        "peak": {
            m: {"value": v, "at_ms": at, **({"hold_until_ms": at + hold_ms} if hold_ms else {})}
            for m, v, at in state.peaks
        },
        "last_values": dict(state.last_values),
        "stable_count": state.stable_count,
        "set_members": list(state.set_members),
        "last_decision": state.last_decision,
        "auto_resolve_at_ms": state.auto_resolve_at(policy),
    }


Step = tuple[dict[str, Any], Outcome, ControlState]  # (record, outcome, state before it)


def release_record(record: dict[str, Any], at_ms: int) -> dict[str, Any]:
    """The auto-release an event finds due before its own decision (its tick had not come yet):
    a record of its own, with an id derived from the event's so a replay gives the same one."""
    digest = hashlib.sha256(f"{record['id']}:release".encode()).hexdigest()[:26]
    return {**record, "kind": "tick", "id": f"evt_{digest}", "accepted_ms": at_ms, "event": {}}


def apply_policy(
    policy: Policy, stored: StoredControl | None, record: dict[str, Any], offset: int
) -> tuple[list[Step], StoredControl]:
    """The outcomes of one record, in order, and the state to store after it. A tick yields at
    most a RESOLVE; an event yields the release that comes before it, if any (its episode's
    policy type changed, or its auto-release was due), then its own decision."""
    state = stored.state if stored is not None else ControlState(policy_type=policy.type)
    at_ms = int(record["accepted_ms"])
    steps: list[Step] = []
    ended = end_for_policy_change(policy, state)  # the type changed: its episode ends first
    if ended is not None:
        steps.append((record if record.get("kind") == "tick" else release_record(record, at_ms), ended, state))
        state = ended.state
    released = tick(policy, state, at_ms)
    if released is not None:
        due = state.auto_resolve_at(policy) or at_ms
        steps.append((record if record.get("kind") == "tick" else release_record(record, due), released, state))
        state = released.state
    if record.get("kind") != "tick":
        outcome = decide(policy, state, control_event(record))
        steps.append((record, outcome, state))
        state = outcome.state
    seq = (stored.seq if stored is not None else 0) + 1
    return steps, StoredControl(state, offset, seq, state.auto_resolve_at(policy))


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
    _log_lag(events)
    batch_generation = generation()
    state_cache.check(batch_generation)
    progress.start_batch(batch_generation)
    _decision_lines.clear()  # lines of an attempt that failed before writing them come again below
    outbox = Outbox()
    written: dict[bytes, tuple[Any, StoredControl]] = {}
    mirrors: dict[bytes, tuple[dict[str, Any], dict[str, Any]]] = {}  # key → (its last trace, its record)
    views = state_cache.views
    skipped = 0
    for event in events:
        use_event(event)  # table reads and writes use the current event's partition
        if progress.admit(event, _stored_progress) is not Admit.APPLY:
            continue
        try:
            record = decode(event.value)
            if not isinstance(record["id"], str):
                raise TypeError("the record id is not a string")
            org_id, topic_id = record["organization_id"], record["topic_id"]
            record["accepted_ms"] = int(record["accepted_ms"])
        except (ValueError, KeyError, TypeError) as exc:
            await send_dead_letter("control", event, f"undecodable publish record: {exc}")
            continue
        cfg = await resources().topic_config(org_id, topic_id)
        policy = policy_of(cfg)
        partition, offset, key = event.message.partition, event.message.offset, event.key
        if policy.type is PolicyType.BYPASS and record.get("kind") != "tick":
            record["decision"] = ControlDecision.NOTIFY
            record["control"] = {"policy": PolicyType.BYPASS, "decision": ControlDecision.NOTIFY}
            await _emit(record, cfg, partition, outbox, event)
            continue
        pending = written.get(key)
        if pending is not None:
            stored: StoredControl | None = pending[1]
        else:
            stored = state_cache.items.get(key)
            if stored is None:
                stored = await read_state(event, key)
        if stored is not None and offset <= stored.offset:
            skipped += 1  # applied, and its outputs delivered, before the worker stopped
            continue
        steps, new = apply_policy(policy, stored, record, offset)
        for rec, outcome, before in steps:
            rec["decision"] = outcome.decision  # a StrEnum member is its string (no slow .value)
            # An episode opens with a NOTIFY and ends with its RESOLVE; a NOTIFY outside any
            # episode (DELTA) is a single event, like a BYPASS one.
            in_episode = outcome.state.episode_open or outcome.decision is ControlDecision.RESOLVE
            rec["episode_key"] = episode_key(key.decode(), outcome.state.episode_seq) if in_episode else None
            rec["control"] = {
                "policy": policy.type,
                "decision": outcome.decision,
                "reason": outcome.reason,
                # The previous record's "after" is this one's "before" (compared by identity: a
                # state written by another worker, or not written at all, is viewed afresh).
                "before": seen[1] if (seen := views.get(key)) and seen[0] is before else state_view(before, policy),
                "after": state_view(outcome.state, policy),
            }
            # A release reaches the workflows that ran for its episode's NOTIFYs, kept in the state.
            release_to = before.episode_workflows if outcome.decision is ControlDecision.RESOLVE else ()
            outputs = await _emit(rec, cfg, partition, outbox, event, release_to)
            trace, after = outputs.trace, outcome.state
            if outputs.notified and after.episode_open:  # a NOTIFY is a record's last step: ``new`` is after it
                after = joined(after, outputs.notified)
                new = replace(new, state=after)
            views[key] = (after, rec["control"]["after"])
        written[key] = (event, new)
        if steps:
            mirrors[key] = (trace, rec)
    for key, (trace, rec) in mirrors.items():
        # The newest state of each key in this batch, for the control_state route (stored by the trace sink).
        trace["control_state"] = _mirror(key, written[key][1], rec)
    flush_decision_log()
    await outbox.deliver()
    states = [(event, key, dump_control(stored)) for key, (event, stored) in written.items()]
    await write_values(control_states, states + progress.markers())
    progress.batch_written()
    for key, (_event, stored) in written.items():
        due_index.update(key, stored.due_ms)
        state_cache.put(key, stored)
    for partition, offset in progress.seeks_due().items():
        if not await seek_back(publish_topic, partition, offset):
            progress.forget(partition)
    skipped += progress.skipped
    if skipped:
        log.info("control: %d redelivered records were applied before the restart and are skipped", skipped)


def _stored_progress() -> tuple[int, int] | None:
    return read_progress(control_states)


skip_record = partial(dead_letter_and_pass, "control", progress, control_states)


async def read_state(event: Any, key: bytes) -> StoredControl | None:
    """The stored state of ``key`` (the current event's partition); an unreadable one is
    dead-lettered with the reason and the key starts from empty state."""
    raw = read_value(control_states, key)
    try:
        return load_control(raw)
    except UnreadableValue as exc:
        assert raw is not None
        await send_unreadable_state("control", event, key, raw, str(exc))
        return None


async def _emit(
    record: dict[str, Any],
    cfg: Any,
    partition: int,
    outbox: Outbox,
    event: Any,
    episode_workflows: tuple[str, ...] | None = (),
) -> WorkflowOutputs:
    """Run the workflow stage for one decided record and queue what it asks to send."""
    outputs = run_workflows(record, cfg, episode_workflows)
    observe_decision(record, len(outputs.actions) + len(outputs.deliveries))
    for action in outputs.actions:
        outbox.add(incident_actions_topic, partition, action)
    for kind, item in outputs.deliveries:
        outbox.add(action_topics[kind], partition, item)
    outbox.add(traces_topic, partition, outputs.trace)
    for reason in outputs.dead_letters:
        await send_dead_letter("workflow", event, reason)
    return outputs


_decision_counts: dict[tuple[str, str], Any] = {}
_decision_lines: list[str] = []


def flush_decision_log() -> None:
    """Write the batch's decision lines with one logging call (a call per line cost more than
    the decision itself): one record whose message is one logfmt line per decision."""
    if _decision_lines:
        if log.isEnabledFor(logging.INFO):
            log.info("\n".join(_decision_lines))
        _decision_lines.clear()


def observe_decision(record: dict[str, Any], actions: int) -> None:
    """Count the decision and write its one structured line (ids and outcome, never the body)."""
    control = record["control"]
    label = (control["policy"], control["decision"])
    counter = _decision_counts.get(label)
    if counter is None:
        counter = _decision_counts[label] = metrics.DECISIONS.labels(*label)
    counter.inc()
    if settings.decision_log:
        _decision_lines.append(
            logfmt.line(
                "decision",
                event_id=record["id"],
                org=record["organization_id"],
                topic=record["topic_id"],
                status=record["status"],
                partition_key=(record.get("event_control") or {}).get("partition_key"),
                policy=control["policy"],
                decision=control["decision"],
                reason=control.get("reason"),
                actions=actions,
            )
        )


def _mirror(key: bytes, stored: StoredControl, record: dict[str, Any]) -> dict[str, Any]:
    """The state as the API's control_state route shows it (the trace sink stores the newest)."""
    return {
        "key": key.decode(),
        "organization_id": record["organization_id"],
        "topic_id": record["topic_id"],
        "status": record["status"],
        "partition_key": (record.get("event_control") or {}).get("partition_key"),
        "seq": stored.seq,
        "view": record["control"]["after"],
    }


def tick_record(key: bytes, now_ms: int) -> dict[str, Any]:
    org_id, topic_id, status, partition = key.decode().split("/", 3)
    return {
        "kind": "tick",
        "id": new_id("evt"),
        "organization_id": org_id,
        "topic_id": topic_id,
        "status": status,
        "event_control": {"partition_key": partition},
        "accepted_ms": now_ms,
        "v": 1,
    }


@app.timer(interval=settings.control_tick_seconds)  # type: ignore[untyped-decorator]  # faust ships no type hints
async def auto_resolve_ticks() -> None:
    """Send a tick for every state of this worker's partitions whose auto-resolve time has come."""
    assignment = active_partitions(publish_topic)
    if assignment != due_index.assignment:
        log.info("control: active partitions %s", sorted(assignment))
        due_index.rebuild(assignment, control_states.items())
    now = clock()
    for key in due_index.take_due(now):
        await publish_topic.send(key=key, value=encode(tick_record(key, now)))
