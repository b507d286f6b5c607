"""Readiness checks shared by the API (``/readyz``) and the worker (its ``/readyz``): each asks
the real component now, with a deadline, rather than trusting cached metadata."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store.db import uncancelled

CHECK_SECONDS = 2.0
OK = "ok"


async def database_check(engine: AsyncEngine) -> str:
    """``ok`` when the database answers ``select 1`` in time, else why not."""

    async def select_one() -> None:
        async with engine.connect() as conn:
            await conn.execute(text("select 1"))

    try:
        async with asyncio.timeout(CHECK_SECONDS):  # the answer is late: the query ends on its own
            await uncancelled(select_one)
    except Exception as exc:  # noqa: BLE001 - readiness reports any failure as a check result
        return f"unavailable: {type(exc).__name__}"
    return OK


async def broker_check(client: Any) -> str:
    """``ok`` when a broker answers a metadata request from the aiokafka ``client`` in time."""
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            await client.fetch_all_metadata()
    except Exception as exc:  # noqa: BLE001 - readiness reports any failure as a check result
        return f"unavailable: {type(exc).__name__}"
    return OK


@dataclass(frozen=True, slots=True)
class RecoveryProgress:
    """How far the worker is in rebuilding its tables from their changelogs: changelog records
    (each one key's state; the changelogs are compacted, so about one per key) and partitions done
    of the total this recovery must read, the time spent and an estimate of the time left (None
    until a first record is read; the rate so far applied to what is left)."""

    records_done: int
    records_total: int
    partitions_done: int
    partitions_total: int
    seconds: float
    done: bool

    @property
    def remaining_seconds(self) -> float | None:
        if self.done or self.records_done >= self.records_total:
            return 0.0
        if self.records_done <= 0 or self.seconds <= 0:
            return None
        return (self.records_total - self.records_done) * self.seconds / self.records_done

    def as_json(self) -> dict[str, Any]:
        """The ``recovery`` object of the worker's ``/readyz`` (docs/api.md)."""
        remaining = self.remaining_seconds
        return {
            "state": "done" if self.done else "recovering",
            "records_done": self.records_done,
            "records_total": self.records_total,
            "partitions_done": self.partitions_done,
            "partitions_total": self.partitions_total,
            "seconds": round(self.seconds, 1),
            "remaining_seconds": None if remaining is None else round(remaining, 1),
        }

    def describe(self) -> str:
        """One log line's worth."""
        if self.done:
            rate = self.records_done / self.seconds if self.seconds > 0 else 0.0
            return (
                f"recovered {self.records_done:,} changelog records in {self.partitions_total} partitions "
                f"in {self.seconds:.1f} s ({rate:,.0f} records/s)"
            )
        remaining = self.remaining_seconds
        left = "unknown yet" if remaining is None else f"about {remaining:.0f} s"
        return (
            f"recovering from the changelogs: {self.records_done:,} of {self.records_total:,} records, "
            f"{self.partitions_done} of {self.partitions_total} partitions done, {self.seconds:.0f} s so far, "
            f"time left {left}"
        )
