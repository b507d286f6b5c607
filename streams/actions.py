"""Delivery agents: push, e-mail and webhook items (from the control agent's workflow stage) are
attempted by their executor; a failed attempt waits in the retry topic of its delay level and
comes back when due (:mod:`streams.retry`); one out of attempts goes to the dead-letter topic and
stays replayable (``POST .../dead_letters/{id}:replay``).

Per batch: decode → drop what was attempted already (the ``deliveries`` rows, one query) →
attempt concurrently → send retries and dead letters and wait for the broker → store the
deliveries, attempts, push outbox rows, disabled endpoints and trace steps in one transaction.
A worker killed in between redelivers the batch: an item attempted but not yet stored is
attempted again (at-least-once; receivers dedupe on ``webhook-id`` / ``Message-ID``, the push
outbox on the effect id); one stored is skipped.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import OrderedDict
from typing import Any

from structlog.contextvars import bind_contextvars

from app.domain.deliveries import already_attempted, attempt_key, dead_item, retry_item
from app.domain.delivery_verdicts import Attempt, DeliveryOutcome, Verdict
from app.domain.delivery_verdicts import verdict_of as _verdict_of
from app.domain.retry_schedule import delay_levels, level_for
from app.executors.base import Executor
from app.kafka.app import action_topics, app, raw_topic, settings
from app.kafka.records import encode
from app.kafka.topics import CONFIG_CHANGES, DELIVERY_DEAD_LETTER, retry_topic
from app.observability import metrics, tracing
from app.store.db import when_available
from app.store.results import DeliveryResult, load_delivery_states, store_delivery_results
from streams.batches import decode_items, store_batch
from streams.resources import resources

log = logging.getLogger(__name__)

DELIVERY_KEYS = ("effect_id", "organization_id", "event_id", "workflow_id", "action_index", "mode", "decision")
dead_letter = raw_topic(DELIVERY_DEAD_LETTER)
config_changes = raw_topic(CONFIG_CHANGES)
_LEVELS = delay_levels(settings.retry_schedule)
retry_topics = {level: raw_topic(retry_topic(level)) for level in _LEVELS}
DELIVERY_ACTORS = 4


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


def verdict_of(attempt: Attempt, number: int, now_s: float) -> DeliveryOutcome:
    return _verdict_of(attempt, number, settings.retry_schedule, now_s, rand=random.random())


async def _secret(item: dict[str, Any]) -> tuple[str | None, bool]:
    """The webhook action's secret and whether its endpoint is disabled, from the cached topic
    configuration (secrets never travel through Kafka)."""
    cfg = await resources().topic_config(item.get("topic_organization_id") or item["organization_id"], item["topic_id"])
    if cfg is None:
        return None, False
    for wf in cfg.workflows:
        if wf.id == item["workflow_id"] and 0 <= int(item["action_index"]) < len(wf.actions):
            action = wf.actions[int(item["action_index"])]
            return action.get("secret"), int(item["action_index"]) in wf.disabled_actions
    return None, False


async def attempt_one(executor: Executor, item: dict[str, Any], limit: asyncio.Semaphore) -> DeliveryResult:
    secret, disabled = (await _secret(item)) if executor.kind == "WEBHOOK" else (None, False)
    number = int(item["attempt"])
    if disabled:
        return DeliveryResult(
            item, Attempt(error="endpoint disabled (410 Gone)"), DeliveryOutcome(Verdict.DISABLE, "disabled")
        )
    async with limit:
        # each attempt runs in a task of its own (deliver_batch's gather): these stay on its lines
        bind_contextvars(
            event_id=item["event_id"], organization_id=item["organization_id"], effect_id=item["effect_id"]
        )
        if tracing.enabled and tracing.ITEM_FIELD in item:
            with tracing.delivery_span(executor.kind, item) as span:
                attempt = await _send(executor, item, secret)
                tracing.attempt_outcome(span, attempt.status_code, attempt.error)
        else:
            attempt = await _send(executor, item, secret)
    return DeliveryResult(item, attempt, verdict_of(attempt, number, time.time()))


async def _send(executor: Executor, item: dict[str, Any], secret: str | None) -> Attempt:
    try:
        return await executor.send(item, secret)
    except (ValueError, KeyError, TypeError) as exc:  # a malformed item: no retry can fix it
        return Attempt(error=f"malformed delivery: {type(exc).__name__}: {exc}", permanent=True)


async def deliver_batch(executor: Executor, values: list[Any]) -> None:
    started, started_wall = time.perf_counter(), time.time()
    items = await decode_items(values, f"deliveries:{executor.kind}", DELIVERY_KEYS)
    if not items:
        return

    async def load_states() -> dict[str, tuple[str, int, int]]:
        async with resources().sessions() as session:
            return await load_delivery_states(session, [i["effect_id"] for i in items])

    states = await when_available(f"deliveries:{executor.kind}", load_states)
    fresh, seen = [], set()
    for item in items:
        key = attempt_key(item)
        if key in seen or key in recent or already_attempted(item, states.get(item["effect_id"])):
            continue
        seen.add(key)
        fresh.append(item)
    if not fresh:
        return
    limit = asyncio.Semaphore(settings.delivery_concurrency)
    checked = time.perf_counter()
    results = await asyncio.gather(*(attempt_one(executor, item, limit) for item in fresh))
    attempted = time.perf_counter()
    pending = []
    for r in results:
        if r.outcome.verdict is Verdict.RETRY:
            delay = r.outcome.delay_s or 0.0
            nxt = retry_item(r.item, executor.kind, delay, time.time())
            pending.append(
                await retry_topics[level_for(delay, _LEVELS)].send(key=r.item["effect_id"].encode(), value=encode(nxt))
            )
        elif r.outcome.verdict is Verdict.DEAD:
            dead = dead_item(r.item, executor.kind, r.outcome.reason)
            pending.append(await dead_letter.send(key=r.item["effect_id"].encode(), value=encode(dead)))
    if pending:
        await asyncio.gather(*pending)
    sent = time.perf_counter()
    await store_batch(f"deliveries:{executor.kind}", results, _write)
    for item in fresh:  # only once the batch's retries, dead letters and rows are all out
        recent.add(attempt_key(item))
    stored = time.perf_counter()
    for org_id in {r.item["organization_id"] for r in results if r.outcome.verdict is Verdict.DISABLE}:
        # Every worker must stop calling the endpoint: the same announcement as a configuration change.
        resources().topics.invalidate_org(org_id)
        await config_changes.send(key=org_id.encode(), value=encode({"org": org_id, "what": "disabled_endpoint"}))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome.verdict] = counts.get(r.outcome.verdict, 0) + 1
    for verdict, n in counts.items():
        metrics.DELIVERIES.labels(executor.kind, verdict).inc(n)
    if counts.get(Verdict.RETRY):
        metrics.RETRIES.labels(executor.kind).inc(counts[Verdict.RETRY])
    if counts.get(Verdict.DEAD):
        metrics.DEAD_LETTERS.labels(f"deliveries:{executor.kind}").inc(counts[Verdict.DEAD])
    oldest = min(int(r.item["accepted_ms"]) for r in results)
    log.info(
        "deliveries kind=%s batch=%d %s waited_ms=%d check_ms=%.0f attempts_ms=%.0f produce_ms=%.0f store_ms=%.0f",
        executor.kind,
        len(results),
        counts,
        int(started_wall * 1000) - oldest,
        (checked - started) * 1000,
        (attempted - checked) * 1000,
        (sent - attempted) * 1000,
        (stored - sent) * 1000,
    )


async def _write(results: list[DeliveryResult]) -> None:
    async with resources().sessions.begin() as session:
        await store_delivery_results(session, results)


def _agent(kind: str) -> Any:
    async def deliveries(stream: Any) -> None:
        executor = resources().executor(kind)
        async for values in stream.take(settings.delivery_batch_size, within=0.05):
            await deliver_batch(executor, values)

    deliveries.__name__ = deliveries.__qualname__ = f"{kind.lower()}_deliveries"
    # Several actors per worker: one batch's attempts overlap another's database write. Items are
    # independent, and Faust commits an offset only once every record before it was processed.
    return app.agent(
        action_topics[kind], name=f"streams.actions.{kind.lower()}_deliveries", concurrency=DELIVERY_ACTORS
    )(deliveries)


push_deliveries = _agent("PUSH")
email_deliveries = _agent("EMAIL")
webhook_deliveries = _agent("WEBHOOK")
