"""Delivery stages: push, e-mail and webhook items (from the control stage's workflow step) are
attempted by their executor; a failed attempt waits in the retry topic of its delay level and
comes back when due (:mod:`streams.retry`); one out of attempts goes to the dead-letter topic and
stays replayable (``POST .../dead_letters/{id}:replay``).

Each item goes its own way, so that one slow receiver holds back nobody else's deliveries
(:class:`Deliveries`):

1. receive: records are taken one by one as they arrive (no batching window); the ones that
   arrived while the previous check ran are checked together: decode, drop what was attempted
   already (the ``deliveries`` rows, one query), and start each remaining item's attempt at once;
2. attempt: concurrently, at most ``delivery_concurrency`` at a time per receiver (a webhook's
   host, or the kind for e-mail and push), so a receiver taking 10 s to answer fills only its own
   slots;
3. write: the attempts that ended within 50 ms (or while the previous write ran) are written together: retries and
   dead letters sent and acknowledged by the broker, then the deliveries, attempts, push outbox
   rows, disabled endpoints and trace steps stored in one transaction;
4. acknowledge: a record is acknowledged once every item of it is written (step 3) or was
   attempted before. The stage commits a partition's offset only up to its first record not
   acknowledged (tables/acked_stage.py), so a worker killed anywhere redelivers what was not written: an item attempted
   but not yet stored is attempted again (at-least-once; receivers dedupe on ``webhook-id`` /
   ``Message-ID``, the push outbox on the effect id); one stored is skipped.

Each attempt's trace step carries the stage timestamps (epoch ms) of its item: ``accepted_ms``
(the API accepted the event), ``decided_ms`` (the control stage sent the item: its record's
timestamp), ``received_ms`` (this stage received it), ``attempted_ms`` (the attempt started),
``ended_ms`` (the attempt ended) and ``delivered_ms`` (= ``ended_ms`` when it delivered, else null).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from app.domain.delivery.deliveries import already_attempted, attempt_key, dead_item, retry_item
from app.domain.delivery.delivery_verdicts import Attempt, DeliveryOutcome, Verdict
from app.domain.delivery.kinds import BY_NAME
from app.domain.shared.retry_schedule import RetrySchedule, delay_levels, level_for
from app.executors.base import Executor
from app.kafka.app import raw_topic, settings
from app.kafka.records import encode
from app.kafka.topics import CONFIG_CHANGES, DELIVERY_DEAD_LETTER, retry_topic
from app.observability import metrics
from app.settings import Settings
from app.store.db import when_available
from app.store.deliveries import DeliveryResult, load_delivery_states, store_delivery_results
from streams.attempts import ReceiverLimits, attempt_one, now_ms
from streams.batches import decode_items, process_until_done, store_batch
from streams.dead_letter import send_dead_letter
from streams.resources import resources
from streams.stage_runner import run_acked_stage
from tables.acked_stage import AckedRecord
from tables.faust_errors import ProducerNotReady

log = logging.getLogger(__name__)

DELIVERY_KEYS = (
    "effect_id",
    "attempt",
    "organization_id",
    "event_id",
    "workflow_id",
    "action_index",
    "mode",
    "decision",
)
dead_letter = raw_topic(DELIVERY_DEAD_LETTER)
config_changes = raw_topic(CONFIG_CHANGES)
_LEVELS = delay_levels(settings.retry.schedule())
retry_topics = {level: raw_topic(retry_topic(level)) for level in _LEVELS}
# Records received and not yet acknowledged, per kind: past this, the stage stops taking records until some are
# written (every receiver answering slowly at once; one slow receiver holds at most its own slots).
MAX_IN_FLIGHT = 20_000
WRITE_GATHER_S = 0.05  # attempts ended within this are written in one transaction
WRITE_RETRIES = RetrySchedule(base_s=0.5, factor=2, max_delay_s=30.0)  # retries/dead letters the broker refused


class RecentAttempts:
    """The attempts this worker made lately, by (effect id, replay, attempt): a record fetched again
    (a commit held back by a missing record sends the consumer back; a rebalance re-reads from the
    committed offset) is skipped here even before its delivery row is stored. Bounded: the oldest
    are forgotten first (the rows answer for them by then)."""

    def __init__(self, size: int = 100_000) -> None:
        self.size = size
        self.keys: OrderedDict[tuple[str, int, int], None] = OrderedDict()

    def __contains__(self, key: tuple[str, int, int]) -> bool:
        return key in self.keys

    def add(self, key: tuple[str, int, int]) -> None:
        self.keys[key] = None
        self.keys.move_to_end(key)
        while len(self.keys) > self.size:
            self.keys.popitem(last=False)


recent = RecentAttempts()


@dataclass(eq=False)
class Received:
    """One record of an action topic: acknowledged once none of its items is left to write."""

    event: Any
    left: int = 0
    checked: bool = False  # checked (its attempts started) or dead-lettered

    def settle(self, n: int = 1) -> None:
        self.left -= n
        if self.left <= 0:
            self.event.ack()


@dataclass(eq=False)
class InFlight:
    """One attempt under way, and the records that wait for it to be written (its own and any
    redelivered copy of it)."""

    records: list[Received] = field(default_factory=list)


class Deliveries:
    """The items of one kind on this worker, from receipt to acknowledgement (module docstring)."""

    def __init__(self, executor: Executor, write: Callable[[list[DeliveryResult]], Awaitable[None]]) -> None:
        self.executor = executor
        self.kind = executor.kind
        self.write = write
        self.limits = ReceiverLimits(settings.outbound.delivery_concurrency)
        self.received: list[Received] = []
        self.ended: list[tuple[DeliveryResult, InFlight]] = []
        self.in_flight: dict[tuple[str, int, int], InFlight] = {}
        self.count = 0  # records received and not acknowledged yet
        self.room = asyncio.Event()
        self.to_check = asyncio.Event()
        self.to_write = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()
        self.report = Report()

    async def run(self, events: Any) -> None:
        """Take ``events`` (a stream without automatic acknowledgement) until cancelled."""
        loops = [asyncio.create_task(self._checks()), asyncio.create_task(self._writes())]
        try:
            async for event in events:
                while self.count >= MAX_IN_FLIGHT:
                    self.room.clear()
                    await self.room.wait()
                self.count += 1
                self.received.append(Received(event))
                self.to_check.set()
        finally:
            for task in [*loops, *self.tasks]:
                task.cancel()
            await asyncio.gather(*loops, *self.tasks, return_exceptions=True)

    def _done(self, n: int) -> None:
        self.count -= n
        if self.count < MAX_IN_FLIGHT:
            self.room.set()

    async def _checks(self) -> None:
        while True:
            await self.to_check.wait()
            self.to_check.clear()
            # at most a batch at a time: one query of bounded size
            size = settings.delivery_batch_size
            batch, self.received = self.received[:size], self.received[size:]
            if self.received:
                self.to_check.set()
            try:
                await process_until_done(f"deliveries:{self.kind}", self.check, batch, self._skip)
            except Exception:  # dead-lettering a record failed for good: the records wait and are checked again
                log.exception(
                    "deliveries kind=%s: checking %d records failed; checking them again", self.kind, len(batch)
                )
                self.received = [r for r in batch if not r.checked] + self.received
                self.to_check.set()
                await asyncio.sleep(WRITE_RETRIES.nominal(1))

    async def _skip(self, record: Received, reason: str) -> None:
        """A record that fails its check alone: dead-lettered with the reason, and acknowledged."""
        await send_dead_letter(f"deliveries:{self.kind}", record.event, reason)
        record.checked = True
        record.event.ack()
        self._done(1)

    async def check(self, batch: list[Received]) -> None:
        """Decode ``batch``, skip what was attempted, start the other items' attempts. Anything that
        can fail comes before the first change, so a failed check can be run again."""
        received_ms = now_ms()
        per_record = []
        for record in batch:
            decoded = await decode_items([record.event.value], f"deliveries:{self.kind}", DELIVERY_KEYS)
            per_record.append((record, [(attempt_key(i), i) for i in decoded]))
        ids = [i["effect_id"] for _, keyed in per_record for _, i in keyed]
        states = await self.states(ids) if ids else {}
        fresh = [
            (record, [(k, i) for k, i in keyed if k not in recent and not already_attempted(i, states.get(k[0]))])
            for record, keyed in per_record
        ]
        for record, todo in fresh:  # no await from here on: every change is made at once
            record.checked = True
            record.left = len(todo) + 1  # held until the loop is through
            # the record's timestamp (in seconds): when the control stage sent it
            decided_ms = int(float(getattr(record.event.message, "timestamp", 0) or 0) * 1000) or None
            for key, item in todo:
                flight = self.in_flight.get(key)
                if flight is not None:  # a copy of an item under way: acknowledged when that is written
                    flight.records.append(record)
                    continue
                flight = self.in_flight[key] = InFlight([record])
                accepted = item.get("accepted_ms")
                stages: dict[str, int | None] = {
                    "accepted_ms": int(accepted) if isinstance(accepted, int | float) else None,
                    "decided_ms": decided_ms,
                    "received_ms": received_ms,
                }
                task = asyncio.create_task(self._attempt(item, flight, stages))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            record.settle()
            if record.left <= 0:
                self._done(1)

    async def states(self, ids: list[str]) -> dict[str, tuple[str, int, int]]:
        """The stored (status, attempts, replays) of these deliveries; a database down is waited for."""

        async def load() -> dict[str, tuple[str, int, int]]:
            async with resources().sessions() as session:
                return await load_delivery_states(session, ids)

        return await when_available(f"deliveries:{self.kind}", load)

    async def _attempt(self, item: dict[str, Any], flight: InFlight, stages: dict[str, int | None]) -> None:
        try:
            result = await attempt_one(self.executor, item, self.limits, stages)
        except Exception as exc:  # a defect, not the receiver's answer: kept replayable, the rest goes on
            log.exception("deliveries kind=%s: attempting %s failed", self.kind, item["effect_id"])
            reason = f"attempt failed: {type(exc).__name__}: {exc}"[:1000]
            result = DeliveryResult(item, Attempt(error=reason, permanent=True), DeliveryOutcome(Verdict.DEAD, reason))
        self.ended.append((result, flight))
        self.to_write.set()

    async def _writes(self) -> None:
        while True:
            await self.to_write.wait()
            # The receivers have their answers already: only the acknowledgement waits for this, and
            # one transaction for the attempts that end meanwhile costs the database far less.
            await asyncio.sleep(WRITE_GATHER_S)
            self.to_write.clear()
            batch, self.ended = self.ended, []
            attempt = 0
            while True:
                try:
                    await self.write_ended(batch)
                    break
                except Exception as exc:  # the broker refused a retry or dead letter: nothing is acknowledged yet
                    attempt += 1
                    if isinstance(exc, ProducerNotReady):  # faust's producer is still starting: worth a wait
                        log.warning(
                            "deliveries kind=%s: the producer is still starting; writing %d attempts again",
                            self.kind,
                            len(batch),
                        )
                    else:
                        log.exception(
                            "deliveries kind=%s: writing %d attempts failed (attempt %d)",
                            self.kind,
                            len(batch),
                            attempt,
                        )
                    await asyncio.sleep(WRITE_RETRIES.nominal(attempt))

    async def write_ended(self, batch: list[tuple[DeliveryResult, InFlight]]) -> None:
        """Send the retries and dead letters of ``batch`` and wait for the broker, store the
        results, then acknowledge the records that waited for them."""
        started = time.perf_counter()
        results = [r for r, _ in batch]
        pending = []
        for r in results:
            if r.outcome.verdict is Verdict.RETRY:
                delay = r.outcome.delay_s or 0.0
                nxt = retry_item(r.item, self.kind, delay, time.time())
                topic = retry_topics[level_for(delay, _LEVELS)]
                pending.append(await topic.send(key=r.item["effect_id"].encode(), value=encode(nxt)))
            elif r.outcome.verdict is Verdict.DEAD:
                dead = dead_item(r.item, self.kind, r.outcome.reason)
                pending.append(await dead_letter.send(key=r.item["effect_id"].encode(), value=encode(dead)))
        if pending:
            await asyncio.gather(*pending)
        sent = time.perf_counter()
        await store_batch(f"deliveries:{self.kind}", results, self.write)
        stored = time.perf_counter()
        settled: dict[int, tuple[Received, int]] = {}
        for r, flight in batch:
            key = attempt_key(r.item)
            recent.add(key)  # only once its retry, dead letter and row are all out
            self.in_flight.pop(key, None)
            for record in flight.records:
                settled[id(record)] = (record, settled.get(id(record), (record, 0))[1] + 1)
        for record, n in settled.values():
            record.settle(n)
            if record.left <= 0:
                self._done(1)
        for org_id in {r.item["organization_id"] for r in results if r.outcome.verdict is Verdict.DISABLE}:
            # Every worker must stop calling the endpoint: the same announcement as a configuration change.
            resources().topics.invalidate_org(org_id)
            await config_changes.send(key=org_id.encode(), value=encode({"org": org_id, "what": "disabled_endpoint"}))
        _count(self.kind, results)
        self.report.add(len(results), (sent - started) * 1000, (stored - sent) * 1000)
        if self.report.due():
            log.info(
                "deliveries kind=%s %s in_flight=%d receivers=%d",
                self.kind,
                self.report.line(),
                len(self.in_flight),
                len(self.limits.slots),
            )


@dataclass
class Report:
    """What the writes did since the last log line (one line per ``every_s`` at most, not per write)."""

    every_s: float = 5.0
    since: float = field(default_factory=time.monotonic)
    written: int = 0
    writes: int = 0
    produce_ms: float = 0.0
    store_ms: float = 0.0

    def add(self, written: int, produce_ms: float, store_ms: float) -> None:
        self.written += written
        self.writes += 1
        self.produce_ms = max(self.produce_ms, produce_ms)
        self.store_ms = max(self.store_ms, store_ms)

    def due(self) -> bool:
        return time.monotonic() - self.since >= self.every_s

    def line(self) -> str:
        text = (
            f"written={self.written} writes={self.writes} in_s={time.monotonic() - self.since:.0f} "
            f"max_produce_ms={self.produce_ms:.0f} max_store_ms={self.store_ms:.0f}"
        )
        self.since, self.written, self.writes, self.produce_ms, self.store_ms = time.monotonic(), 0, 0, 0.0, 0.0
        return text


def _count(kind: str, results: list[DeliveryResult]) -> None:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome.verdict] = counts.get(r.outcome.verdict, 0) + 1
    for verdict, n in counts.items():
        metrics.DELIVERIES.labels(kind, verdict).inc(n)
    if counts.get(Verdict.RETRY):
        metrics.RETRIES.labels(kind).inc(counts[Verdict.RETRY])
    if counts.get(Verdict.DEAD):
        metrics.DEAD_LETTERS.labels(f"deliveries:{kind}").inc(counts[Verdict.DEAD])


async def _write(kind: str, results: list[DeliveryResult]) -> None:
    async with resources().sessions.begin() as session:
        await store_delivery_results(session, kind, results)


async def run_deliveries(settings: Settings, kind: str) -> None:
    """The delivery stage of ``kind`` on this worker: its action topic's records as they arrive, each
    acknowledged (and then committed) once its items are written."""
    executor = resources().executor(kind)

    async def handle(records: AsyncIterator[AckedRecord]) -> None:
        await Deliveries(executor, functools.partial(_write, kind)).run(records)

    stage = BY_NAME[kind]
    await run_acked_stage(settings, stage.stage, stage.topic, handle, settings.delivery_batch_size)
