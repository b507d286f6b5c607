"""One delivery attempt (streams/actions.py runs them): the webhook's secret and whether its endpoint
is disabled, the receiver whose slots the attempt takes, the executor's send in its span, and the
verdict on the retry schedule, with the stage timestamps of the attempt."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from structlog.contextvars import bind_contextvars

from app.domain.delivery.delivery_verdicts import Attempt, DeliveryOutcome, Verdict
from app.domain.delivery.delivery_verdicts import verdict_of as _verdict_of
from app.domain.delivery.kinds import BY_NAME
from app.executors.base import Executor
from app.kafka.app import settings
from app.observability import trace_context, tracing, worker_spans
from app.store.deliveries import DeliveryResult
from streams.resources import resources


def verdict_of(attempt: Attempt, number: int, now_s: float) -> DeliveryOutcome:
    return _verdict_of(attempt, number, settings.retry.schedule(), now_s, rand=random.random())


def now_ms() -> int:
    return int(time.time() * 1000)


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


def receiver_of(kind: str, item: dict[str, Any]) -> str:
    """Whose slots an attempt takes: a webhook's host (scheme and port included), else the kind."""
    if BY_NAME[kind].per_host:
        try:
            parts = urlsplit(str(item["content"]["url"]))
        except (KeyError, TypeError, ValueError):
            return kind
        return f"{parts.scheme}://{parts.netloc}".lower()
    return kind


class ReceiverLimits:
    """At most ``size`` attempts at a time per receiver; a receiver with none running is forgotten."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.slots: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}  # receiver → (slots, [users])

    async def run(self, receiver: str, call: Callable[[], Awaitable[Attempt]]) -> Attempt:
        slot = self.slots.get(receiver)
        if slot is None:
            slot = self.slots[receiver] = (asyncio.Semaphore(self.size), [0])
        semaphore, users = slot
        users[0] += 1
        try:
            async with semaphore:
                return await call()
        finally:
            users[0] -= 1
            if not users[0]:
                del self.slots[receiver]


async def attempt_one(
    executor: Executor, item: dict[str, Any], limits: ReceiverLimits, stages: dict[str, int | None] | None = None
) -> DeliveryResult:
    stages = {} if stages is None else stages
    secret, disabled = (await _secret(item)) if BY_NAME[executor.kind].signed else (None, False)
    number = int(item["attempt"])
    if disabled:
        stages["attempted_ms"] = stages["ended_ms"] = now_ms()
        return DeliveryResult(
            item, Attempt(error="endpoint disabled (410 Gone)"), DeliveryOutcome(Verdict.DISABLE, "disabled"), stages
        )
    # each attempt runs in a task of its own (Deliveries._attempt): these stay on its lines
    bind_contextvars(
        event_id=item["event_id"],
        organization_id=item["organization_id"],
        effect_id=item["effect_id"],
        **({"request_id": item["request_id"]} if isinstance(item.get("request_id"), str) else {}),
    )

    async def send() -> Attempt:
        stages["attempted_ms"] = now_ms()
        if tracing.enabled and trace_context.ITEM_FIELD in item:
            with worker_spans.delivery_span(executor.kind, item) as span:
                traced = await _send(executor, item, secret)
                worker_spans.attempt_outcome(span, traced.status_code, traced.error)
                return traced
        return await _send(executor, item, secret)

    attempt = await limits.run(receiver_of(executor.kind, item), send)
    stages["ended_ms"] = now_ms()
    outcome = verdict_of(attempt, number, time.time())
    stages["delivered_ms"] = stages["ended_ms"] if outcome.verdict is Verdict.DELIVERED else None
    return DeliveryResult(item, attempt, outcome, stages)


async def _send(executor: Executor, item: dict[str, Any], secret: str | None) -> Attempt:
    try:
        return await executor.send(item, secret)
    except (ValueError, KeyError, TypeError) as exc:  # a malformed item: no retry can fix it
        return Attempt(error=f"malformed delivery: {type(exc).__name__}: {exc}", permanent=True)
