"""Engine, sessions and migrations of the config store (SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.domain.shared.retry_schedule import RetrySchedule
from app.errors import Conflict

MIGRATIONS = Path(__file__).with_name("migrations")
# One statement or transaction that takes longer is abandoned (the server may be hanging).
OPERATION_SECONDS = 30.0
log = logging.getLogger(__name__)
T = TypeVar("T")


def database_unavailable(exc: BaseException) -> bool:
    """The database could not be reached, did not answer in time, or dropped the connection."""
    # OSError: refused, reset, host unreachable, name not resolved; TimeoutError: asyncpg's connect
    # and command timeouts (a hung server, a half-open network), not wrapped by SQLAlchemy;
    # PoolTimeout: every pooled connection is stuck in such a wait.
    if isinstance(exc, OperationalError | InterfaceError | OSError | TimeoutError | PoolTimeout):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    # SQLSTATE class 08 (connection exception) and 57 (operator intervention: shutting down,
    # starting up, crashed): the server, not the statement, is the problem.
    sqlstate = str(getattr(exc.orig, "sqlstate", None) or "")
    return exc.connection_invalidated or sqlstate.startswith(("08", "57"))


_finishing: set[asyncio.Task[Any]] = set()  # operations whose caller was cancelled, running to their end


def _finished(task: asyncio.Task[Any]) -> None:
    _finishing.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.warning("a database operation whose caller gave up failed: %r", task.exception())


async def uncancelled(operation: Callable[[], Awaitable[T]]) -> T:
    """``operation()``, run to its end (commit or rollback) even when the caller is cancelled (the
    cancellation still reaches the caller at once). A transaction cut mid-statement on SQLite leaves
    its aiosqlite connection invalidated but never closed: it keeps the database's write lock, and
    every other process's writes fail with "database is locked" until this one exits."""
    task = asyncio.ensure_future(operation())
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        _finishing.add(task)
        task.add_done_callback(_finished)
        raise


def written_meanwhile(exc: BaseException) -> bool:
    """A unique key another writer stored between this transaction's reads and its inserts (a
    previous owner's write ending after a rebalance, a member the group dropped): read again, the
    rows are found and skipped."""
    return isinstance(exc, IntegrityError)


async def when_available(what: str, operation: Callable[[], Awaitable[T]], max_delay: float = 5.0) -> T:
    """Run ``operation`` until the database answers it: an unavailable or hanging database is
    waited for (logged, with backoff), any other error is raised. The worker uses it so a
    database outage holds the stream back instead of losing or dead-lettering records."""
    waits = RetrySchedule(base_s=0.2, factor=2, max_delay_s=max_delay)
    attempt = 0
    while True:
        try:
            async with asyncio.timeout(OPERATION_SECONDS):  # the wait is abandoned, the operation ends on its own
                return await uncancelled(operation)
        except Exception as exc:
            if not database_unavailable(exc):  # asyncio.timeout above raises TimeoutError: included
                raise
            attempt += 1
            delay = waits.nominal(attempt)
            log.warning("%s: database unavailable (%s); retrying in %.1f s", what, type(exc).__name__, delay)
        await asyncio.sleep(delay)


# asyncpg: give up connecting after 5 s (its default is 60) and on a statement after 30 s.
_PG_CONNECT = {"timeout": 5, "command_timeout": OPERATION_SECONDS}


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
    # A server that does not answer fails a connection in 5 s (asyncpg waits 60 s by default): the API
    # answers 503 promptly instead of holding every request.
    return create_async_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=True, connect_args=_PG_CONNECT)


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
