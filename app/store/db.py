"""Engine, sessions and migrations of the config store (SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.errors import Conflict

MIGRATIONS = Path(__file__).with_name("migrations")


def create_engine(url: str) -> AsyncEngine:
    """An async engine; SQLite gets WAL and a busy timeout so API and worker share the file."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database:
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": 15})

        @event.listens_for(engine.sync_engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=15000")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    return create_async_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=True)


def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def migrate(url: str) -> None:
    """Bring the schema to the newest revision (idempotent)."""
    command.upgrade(alembic_config(url), "head")


async def migrate_async(url: str) -> None:
    await asyncio.to_thread(migrate, url)


async def commit_unique(session: AsyncSession, conflict_message: str) -> None:
    """Commit; a unique-constraint violation becomes ``409 RES-002`` with ``conflict_message``."""
    try:
        await session.commit()
    except IntegrityError as exc:
        await session.rollback()
        raise Conflict(conflict_message) from exc
