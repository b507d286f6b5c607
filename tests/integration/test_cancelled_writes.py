"""A worker write whose caller is cancelled (a sink giving its batch up at a rebalance, the wait for
a hanging database abandoned) must leave the database writable by every other process.

Before app/store/db.uncancelled, a trace write cancelled mid-transaction on SQLite left its
aiosqlite connection invalidated but never closed: it kept the write lock, and every other
process's writes (the other workers' sinks and deliveries, the API) failed with "database is
locked" until that worker exited. The scaling e2e test caught it as partitions left behind."""

from __future__ import annotations

import asyncio
import functools
import random
import sqlite3
from pathlib import Path
from typing import Any

from app.store.db import create_engine, migrate_async, sessionmaker, when_available
from app.store.results import record_trace_steps

TRIALS = 20


def _steps(n: int, batch: int) -> list[dict[str, Any]]:
    return [
        {
            "event_id": f"evt_{batch}_{i}",
            "step": "control",
            "organization_id": "org_x",
            "at_ms": 1,
            "seq": 0,
            "detail": {"decision": "NOTIFY", "pad": "x" * 300},
        }
        for i in range(n)
    ]


def _writable(db: Path) -> bool:
    """Another process's view: can it take the write lock within 2 s?"""
    con = sqlite3.connect(db, timeout=2)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.rollback()
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        con.close()


async def test_a_write_cancelled_mid_transaction_leaves_the_database_writable(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    url = f"sqlite+aiosqlite:///{db}"
    await migrate_async(url)
    engine = create_engine(url)
    sessions = sessionmaker(engine)
    rng = random.Random(38)

    async def write(batch: int) -> None:
        async with sessions.begin() as session:
            await record_trace_steps(session, _steps(1500, batch))

    try:
        for trial in range(TRIALS):
            task = asyncio.create_task(when_available("test", functools.partial(write, trial)))
            await asyncio.sleep(rng.uniform(0.0, 0.3))  # cut the write at a random point of its transaction
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            assert await asyncio.to_thread(_writable, db), f"the database stayed locked after cancel {trial + 1}"
        # and this process goes on writing
        await when_available("test", functools.partial(write, TRIALS))
    finally:
        await engine.dispose()
