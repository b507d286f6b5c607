"""The config store on SQLite and on PostgreSQL: migrations, bootstrap, tokens, incident dedupe."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.domain.tokens import token_hash
from app.store import accounts, results
from app.store.db import create_engine, migrate_async, sessionmaker
from app.store.models import AccessToken
from tests.support.postgres_local import LocalPostgres


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    else:
        server: LocalPostgres = request.getfixturevalue("postgres")
        url = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    await migrate_async(url)
    await migrate_async(url)  # idempotent
    eng = create_engine(url)
    yield eng
    await eng.dispose()


async def test_bootstrap_token_resolves_to_owner_principal(engine: AsyncEngine) -> None:
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        created = await accounts.bootstrap(session, "Acme")
    async with sessions() as session:
        found = await accounts.lookup_token(session, token_hash(created["access_token"]), datetime.now(UTC))
    assert found.principal is not None
    assert found.principal.organization_id == created["organization_id"]
    assert found.principal.platform_owner
    assert [b.role_id for b in found.principal.bindings] == ["owner"]
    async with sessions() as session:
        stored = list((await session.scalars(select(AccessToken.token_hash))).all())
    assert created["access_token"] not in str(stored)


async def test_revoked_and_expired_tokens_do_not_resolve(engine: AsyncEngine) -> None:
    sessions = sessionmaker(engine)
    now = datetime.now(UTC)
    async with sessions.begin() as session:
        org = await accounts.create_organization(session, "Acme")
        account = await accounts.create_account(session, org.id, kind="service_account", name="ci")
        revoked, revoked_plain = await accounts.issue_token(session, account)
        revoked.revoked_at = now
        _expired, expired_plain = await accounts.issue_token(session, account, expires_at=now - timedelta(seconds=1))
    async with sessions() as session:
        gone = await accounts.lookup_token(session, token_hash(revoked_plain), now)
        old = await accounts.lookup_token(session, token_hash(expired_plain), now)
        unknown = await accounts.lookup_token(session, token_hash("nope"), now)
    assert gone.principal is None and not gone.expired
    assert old.principal is None and old.expired
    assert unknown.principal is None and not unknown.expired


def _action(effect: str, event: str, publisher_id: str | None) -> dict[str, object]:
    return {
        "effect_id": effect,
        "event_id": event,
        "organization_id": "org_1",
        "topic_id": "wtp_1",
        "workflow_id": "wfl_1",
        "operation_book_id": "obk_1",
        "title": "t",
        "mode": "ACTUAL",
        "decision": "NOTIFY",
        "accepted_ms": 1_700_000_000_000,
        "publisher_event_id": publisher_id,
    }


async def test_incident_effects_are_deduplicated_and_bypass_event_id_updates_open_incident(
    engine: AsyncEngine,
) -> None:
    sessions = sessionmaker(engine)
    batch = [_action("act_a", "evt_a", "quake-1"), _action("act_b", "evt_b", "quake-2")]
    async with sessions.begin() as session:
        first = await results.apply_incident_actions(session, batch)
    async with sessions.begin() as session:
        again = await results.apply_incident_actions(session, [*batch, _action("act_c", "evt_c", "quake-1")])
    assert (first.created, first.updated, first.duplicates) == (2, 0, 0)
    assert (again.created, again.updated, again.duplicates) == (0, 1, 2)


async def test_datetimes_come_back_timezone_aware_on_every_backend(engine: AsyncEngine) -> None:
    """A datetime comes back as the same instant, in UTC, whatever offset it was written with: not
    merely "aware" (a value shifted by an offset, or read back in local time, is aware too)."""
    from app.store.models import Organization

    written = datetime(2026, 6, 1, 21, 30, 15, 123000, tzinfo=timezone(timedelta(hours=9)))  # 12:30:15.123Z
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        org = await accounts.create_organization(session, "Acme")
        org.created_at = written
    async with sessions() as session:
        stored = await session.get(Organization, org.id)
    assert stored is not None
    assert stored.created_at.utcoffset() == timedelta(0), stored.created_at
    assert stored.created_at == written
    assert stored.created_at.replace(tzinfo=None) == datetime(2026, 6, 1, 12, 30, 15, 123000)
