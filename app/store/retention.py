"""Retention: rows older than their table's retention are deleted, in bounded batches.

What is purged, by which timestamp (each retention a setting, in days; 0 keeps forever):

| kind | table | age from | setting |
|---|---|---|---|
| traces | ``event_trace_steps`` | ``recorded_at`` (each step on its own) | ``TOCSIN_TRACE_RETENTION_DAYS`` |
| push_outbox | ``push_notifications`` | ``created_at`` | ``TOCSIN_PUSH_OUTBOX_RETENTION_DAYS`` |
| exchanges | ``exchange_attempts`` | ``at`` | ``TOCSIN_EXCHANGE_RETENTION_DAYS`` |
| audit_log | ``audit_log`` | ``at`` | ``TOCSIN_AUDIT_RETENTION_DAYS`` |

Each batch is one short transaction ``DELETE ... WHERE key IN (SELECT key ... WHERE ts < cutoff
LIMIT n)`` on an index of the timestamp (migration 0006), so PostgreSQL never holds one giant
delete's locks and WAL, and SQLite's writer lock is released between batches for the API and
the sink. A pass ends when a batch deletes fewer than ``n`` rows; rows written meanwhile are
newer than the cutoff, so a pass always ends. Running it on several replicas at once is safe
(a row is deleted once; the others find fewer rows), only wasteful.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, select, text, tuple_
from sqlalchemy.ext.asyncio import AsyncEngine

from app.settings import Settings
from app.store.models import AuditEntry, EventTraceStep, ExchangeAttempt, PushNotification

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Target:
    table: Any
    age: Any  # the timestamp column
    keys: tuple[Any, ...]  # the primary key columns


TARGETS: Mapping[str, _Target] = {
    "traces": _Target(
        EventTraceStep.__table__, EventTraceStep.recorded_at, (EventTraceStep.event_id, EventTraceStep.step)
    ),
    "push_outbox": _Target(PushNotification.__table__, PushNotification.created_at, (PushNotification.id,)),
    "exchanges": _Target(ExchangeAttempt.__table__, ExchangeAttempt.at, (ExchangeAttempt.id,)),
    "audit_log": _Target(AuditEntry.__table__, AuditEntry.at, (AuditEntry.id,)),
}


async def purge_older_than(engine: AsyncEngine, kind: str, cutoff: datetime, batch_size: int) -> int:
    """Delete ``kind``'s rows older than ``cutoff``, ``batch_size`` per transaction; how many."""
    target = TARGETS[kind]
    oldest = select(*target.keys).where(target.age < cutoff).limit(batch_size)
    single = len(target.keys) == 1
    chosen: ColumnElement[bool] = (
        target.keys[0].in_(oldest.scalar_subquery()) if single else tuple_(*target.keys).in_(oldest)
    )
    statement = delete(target.table).where(chosen)
    total = 0
    while True:
        async with engine.begin() as conn:
            deleted = (await conn.execute(statement)).rowcount
        total += deleted
        if deleted < batch_size:
            return total
        await asyncio.sleep(0)  # let the process serve requests between batches


# The advisory lock of the retention pass (PostgreSQL): one key for every replica of a deployment.
PURGE_LOCK_KEY = 0x746F6373_7075  # "tocs" "pu"


@asynccontextmanager
async def purge_turn(engine: AsyncEngine) -> AsyncIterator[bool]:
    """Whether this process runs the retention pass now. On PostgreSQL, N API replicas share the
    database: a transaction-level advisory lock, held on its own connection for the whole pass,
    lets one of them purge and the others skip their turn (a replica that dies mid-pass releases
    it with its connection). SQLite is one file on one host, whose writers wait for each other:
    always."""
    if engine.dialect.name != "postgresql":
        yield True
        return
    async with engine.begin() as conn:
        taken = bool(await conn.scalar(text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": PURGE_LOCK_KEY}))
        yield taken  # the transaction's end releases the lock


async def purge(engine: AsyncEngine, settings: Settings, now: datetime | None = None) -> dict[str, int]:
    """One pass over every kind with a retention, unless another replica is running one (then
    nothing, an empty result); rows deleted per kind. Logs one INFO line."""
    async with purge_turn(engine) as mine:
        if not mine:
            log.info("retention_purge", extra={"skipped": "another replica is purging"})
            return {}
        return await _purge(engine, settings, now or datetime.now(UTC))


async def _purge(engine: AsyncEngine, settings: Settings, now: datetime) -> dict[str, int]:
    started = time.perf_counter()
    counts: dict[str, int] = {}
    for kind, days in settings.retention.days().items():
        if days > 0:
            counts[kind] = await purge_older_than(
                engine, kind, now - timedelta(days=days), settings.retention.retention_batch_size
            )
    log.info(
        "retention_purge",
        extra={
            **{kind: counts.get(kind, "kept") for kind in TARGETS},
            "ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
    return counts


async def run_periodically(engine: AsyncEngine, settings: Settings) -> None:
    """Purge every ``retention_interval_seconds`` (the first pass a minute after start); never raises
    but on cancellation. ``retention_interval_seconds = 0`` turns it off."""
    interval = settings.retention.retention_interval_seconds
    if interval <= 0:
        return
    await asyncio.sleep(min(60.0, interval))
    while True:
        try:
            await purge(engine, settings)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the next pass retries; the rows only get older
            log.warning("retention purge failed, next pass in %.0f s: %s", interval, exc)
        await asyncio.sleep(interval)
