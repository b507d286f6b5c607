"""Retention on SQLite and on PostgreSQL: rows past their retention are deleted in bounded
batches, newer rows and kinds kept forever (0 days) stay, one INFO line per pass; `tocsin purge`."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.settings import Settings
from app.settings.retention import RetentionSettings
from app.store.db import create_engine, migrate_async, sessionmaker
from app.store.models import AuditEntry, EventTraceStep, ExchangeAttempt, PushNotification
from app.store.retention import purge, purge_older_than
from tests.support.postgres_local import LocalPostgres

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
MODELS: dict[str, Any] = {
    "traces": EventTraceStep,
    "push_outbox": PushNotification,
    "exchanges": ExchangeAttempt,
    "audit_log": AuditEntry,
}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    else:
        server: LocalPostgres = request.getfixturevalue("postgres")
        url = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    await migrate_async(url)
    eng = create_engine(url)
    yield eng
    await eng.dispose()


def _row(kind: str, at: datetime, n: int) -> Any:
    rid = f"{kind[:3]}_{uuid.uuid4().hex[:16]}"
    if kind == "traces":
        return EventTraceStep(
            event_id=f"evt_{rid}", step=f"step{n}", organization_id="org_a", seq=n, detail={}, recorded_at=at
        )
    if kind == "push_outbox":
        return PushNotification(
            id=rid,
            organization_id="org_a",
            event_id="evt_x",
            workflow_id="wfl_x",
            mode="ACTUAL",
            user_ids=[],
            group_ids=[],
            title="t",
            body="b",
            apns={},
            fcm={},
            created_at=at,
        )
    if kind == "exchanges":
        return ExchangeAttempt(
            id=rid,
            credential_id="cred_x",
            organization_id="org_a",
            at=at,
            outcome="ok",
            failed_check=None,
            subject="s",
            client_address="127.0.0.1",
        )
    return AuditEntry(
        id=rid,
        organization_id="org_a",
        actor_kind="service_account",
        actor_id="sa_x",
        action="create",
        target_type="workflow",
        target_id="wfl_x",
        detail={},
        at=at,
    )


async def _insert(engine: AsyncEngine, kind: str, at: datetime, count: int) -> None:
    async with sessionmaker(engine).begin() as session:
        session.add_all(_row(kind, at, n) for n in range(count))


async def _ages(engine: AsyncEngine, kind: str) -> list[datetime]:
    model = MODELS[kind]
    column = {"traces": "recorded_at", "push_outbox": "created_at"}.get(kind, "at")
    async with sessionmaker(engine)() as session:
        return sorted((await session.scalars(select(getattr(model, column)))).all())


def _settings(**changes: Any) -> Settings:
    base: dict[str, Any] = {
        "trace_retention_days": 30,
        "push_outbox_retention_days": 30,
        "exchange_retention_days": 90,
        "audit_retention_days": 365,
        "retention_batch_size": 3,
    }
    return Settings(retention=RetentionSettings(**{**base, **changes}))


async def test_old_rows_go_new_rows_stay_for_every_kind(engine: AsyncEngine, caplog: pytest.LogCaptureFixture) -> None:
    days = {"traces": 30, "push_outbox": 30, "exchanges": 90, "audit_log": 365}
    for kind, keep in days.items():
        await _insert(engine, kind, NOW - timedelta(days=keep, minutes=1), 7)  # just past the retention
        await _insert(engine, kind, NOW - timedelta(days=keep, minutes=-1), 2)  # just inside it
        await _insert(engine, kind, NOW - timedelta(hours=1), 2)
    with caplog.at_level(logging.INFO, logger="app.store.retention"):
        counts = await purge(engine, _settings(), now=NOW)
    assert counts == {"traces": 7, "push_outbox": 7, "exchanges": 7, "audit_log": 7}
    for kind, keep in days.items():
        ages = await _ages(engine, kind)
        assert len(ages) == 4, kind
        assert min(ages) > NOW - timedelta(days=keep), kind
    lines = [r for r in caplog.records if r.getMessage() == "retention_purge"]
    assert len(lines) == 1
    assert {kind: getattr(lines[0], kind) for kind in days} == {kind: 7 for kind in days}
    assert await purge(engine, _settings(), now=NOW) == {"traces": 0, "push_outbox": 0, "exchanges": 0, "audit_log": 0}


async def test_zero_days_keeps_forever(engine: AsyncEngine) -> None:
    await _insert(engine, "audit_log", NOW - timedelta(days=3650), 3)
    await _insert(engine, "exchanges", NOW - timedelta(days=3650), 3)
    counts = await purge(engine, _settings(audit_retention_days=0), now=NOW)
    assert "audit_log" not in counts
    assert counts["exchanges"] == 3
    assert len(await _ages(engine, "audit_log")) == 3


@pytest.mark.parametrize("kind", ["traces", "audit_log"])  # a composite key and a single one
async def test_deletes_in_batches_of_at_most_the_batch_size(engine: AsyncEngine, kind: str) -> None:
    await _insert(engine, kind, NOW - timedelta(days=400), 10)
    await _insert(engine, kind, NOW, 1)
    deletes: list[int] = []

    def count(_conn: Any, _cursor: Any, statement: str, _params: Any, _context: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith("DELETE"):
            deletes.append(_cursor.rowcount)

    event.listen(engine.sync_engine, "after_cursor_execute", count)
    try:
        assert await purge_older_than(engine, kind, NOW - timedelta(days=365), batch_size=4) == 10
    finally:
        event.remove(engine.sync_engine, "after_cursor_execute", count)
    assert deletes == [4, 4, 2]
    assert len(await _ages(engine, kind)) == 1


async def test_traces_purge_by_step_age_on_the_composite_key(engine: AsyncEngine) -> None:
    async with sessionmaker(engine).begin() as session:
        session.add_all(
            [
                EventTraceStep(
                    event_id="evt_1",
                    step="control",
                    organization_id="o",
                    seq=1,
                    detail={},
                    recorded_at=NOW - timedelta(days=40),
                ),
                EventTraceStep(
                    event_id="evt_1",
                    step="delivery",
                    organization_id="o",
                    seq=2,
                    detail={},
                    recorded_at=NOW - timedelta(days=1),
                ),
                EventTraceStep(
                    event_id="evt_2",
                    step="control",
                    organization_id="o",
                    seq=1,
                    detail={},
                    recorded_at=NOW - timedelta(days=1),
                ),
            ]
        )
    assert await purge_older_than(engine, "traces", NOW - timedelta(days=30), batch_size=100) == 1
    async with sessionmaker(engine)() as session:
        left = (await session.execute(select(EventTraceStep.event_id, EventTraceStep.step))).all()
    assert sorted(tuple(r) for r in left) == [("evt_1", "delivery"), ("evt_2", "control")]


def test_tocsin_purge_runs_one_pass(tmp_path: Path) -> None:
    env = {**os.environ, "TOCSIN_VAR_DIR": str(tmp_path), "TOCSIN_EXCHANGE_RETENTION_DAYS": "0"}
    env.pop("TOCSIN_DATABASE_URL", None)
    subprocess.run([sys.executable, "-m", "cli", "migrate"], cwd=ROOT, env=env, check=True, timeout=120)

    async def arrange() -> None:
        engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'tocsin.db'}")
        try:
            await _insert(engine, "audit_log", datetime.now(UTC) - timedelta(days=400), 2)
            await _insert(engine, "exchanges", datetime.now(UTC) - timedelta(days=400), 2)
            await _insert(engine, "audit_log", datetime.now(UTC), 1)
        finally:
            await engine.dispose()

    asyncio.run(arrange())
    out = subprocess.run(
        [sys.executable, "-m", "cli", "purge"], cwd=ROOT, env=env, check=True, timeout=120, capture_output=True
    )
    assert json.loads(out.stdout.decode().strip().splitlines()[-1]) == {"traces": 0, "push_outbox": 0, "audit_log": 2}


@pytest.mark.postgres
async def test_one_replica_purges_at_a_time_on_postgresql(postgres: LocalPostgres) -> None:
    """Issue 19, item 7: N API replicas on one PostgreSQL run the retention pass one at a time.
    A replica whose turn it is holds the advisory lock for its pass; another replica's pass
    meanwhile deletes nothing and says so; once the first is done, the next pass purges."""
    from sqlalchemy import text

    from app.store.retention import PURGE_LOCK_KEY

    url = postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
    await migrate_async(url)
    first, second = create_engine(url), create_engine(url)  # two replicas: two engines, two pools
    try:
        await _insert(second, "audit_log", NOW - timedelta(days=3650), 4)
        async with first.begin() as conn:  # the first replica's pass is running
            assert await conn.scalar(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": PURGE_LOCK_KEY})
            assert await purge(second, _settings(), now=NOW) == {}
            assert len(await _ages(second, "audit_log")) == 4
        counts = await purge(second, _settings(), now=NOW)
        assert counts["audit_log"] == 4 and await _ages(second, "audit_log") == []
    finally:
        await first.dispose()
        await second.dispose()
