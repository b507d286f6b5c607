"""The config store on SQLite and on PostgreSQL: migrations, bootstrap, tokens, incident dedupe."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.domain.delivery.delivery_verdicts import Attempt, DeliveryOutcome, Verdict
from app.domain.iam.tokens import token_hash
from app.store import accounts, deliveries, results
from app.store.db import create_engine, migrate_async, sessionmaker
from app.store.models import AccessToken, Delivery, EventTraceStep
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


async def test_two_workers_storing_one_delivery_at_once_both_succeed(engine: AsyncEngine) -> None:
    """After a rebalance two workers may make the same attempt of one effect id and store it at
    once: each read the row as absent before the other wrote it. Both stores succeed and one row
    is left (before: the second insert failed on the primary key, an ERROR line and a retry)."""
    make = sessionmaker(engine)
    item = {
        "effect_id": "eff_race",
        "organization_id": "org_race",
        "event_id": "evt_race",
        "workflow_id": "wfl_race",
        "action_index": 0,
        "mode": "ACTUAL",
        "decision": "NOTIFY",
        "attempt": 1,
        "accepted_ms": 1,
        "content": {"url": "https://example.com/hook"},
    }
    result = deliveries.DeliveryResult(item, Attempt(status_code=204), DeliveryOutcome(Verdict.DELIVERED, "2xx"))
    read, both_read = [0], asyncio.Event()

    async def store() -> None:
        async with make.begin() as session:
            scalars = session.scalars

            async def read_then_wait_for_the_other(*args: object, **kwargs: object) -> object:
                found = await scalars(*args, **kwargs)  # type: ignore[arg-type]
                read[0] += 1
                if read[0] == 2:
                    both_read.set()
                if read[0] <= 2:  # the first read of each: wait until the other has read too
                    with contextlib.suppress(TimeoutError):  # or it is blocked on our write
                        await asyncio.wait_for(both_read.wait(), 2)
                return found

            session.scalars = read_then_wait_for_the_other  # type: ignore[method-assign]
            await deliveries.store_delivery_results(session, "WEBHOOK", [result])

    await asyncio.gather(store(), store())
    async with make() as session:
        rows = (await session.scalars(select(Delivery).where(Delivery.id == "eff_race"))).all()
    assert [(r.status, r.attempts) for r in rows] == [("DELIVERED", 1)]


def _delivery(attempt: int, replay: int, outcome: DeliveryOutcome, code: int | None) -> deliveries.DeliveryResult:
    item = {
        "effect_id": "eff_seq",
        "organization_id": "org_seq",
        "event_id": "evt_seq",
        "workflow_id": "wfl_seq",
        "action_index": 0,
        "mode": "ACTUAL",
        "decision": "NOTIFY",
        "attempt": attempt,
        "replay": replay,
        "accepted_ms": 1,
        "content": {"url": "https://example.com/hook"},
    }
    return deliveries.DeliveryResult(item, Attempt(status_code=code, permanent=False), outcome)


RETRY = DeliveryOutcome(Verdict.RETRY, "5xx", delay_s=30.0)
DEAD = DeliveryOutcome(Verdict.DEAD, "retries exhausted")
DELIVERED = DeliveryOutcome(Verdict.DELIVERED, "2xx")


async def _row_and_steps(engine: AsyncEngine) -> tuple[tuple[object, ...], list[str]]:
    async with sessionmaker(engine)() as session:
        row = (await session.scalars(select(Delivery).where(Delivery.id == "eff_seq"))).one()
        steps = (await session.scalars(select(EventTraceStep.step).where(EventTraceStep.event_id == "evt_seq"))).all()
    return (row.status, row.attempts, row.replays, row.last_status_code, row.kind, bool(row.item)), sorted(steps)


async def test_a_delivery_row_only_moves_forward_and_keeps_its_item_for_a_replay(engine: AsyncEngine) -> None:
    """Attempts stored in one batch apply in order; one stored after a later one changes neither the
    row nor the trace; the item kept when the delivery died stays through a replay that delivers."""
    make = sessionmaker(engine)
    async with make.begin() as session:  # attempt 1 (retry) and 2 in one batch
        await deliveries.store_delivery_results(
            session, "WEBHOOK", [_delivery(1, 0, RETRY, 503), _delivery(2, 0, RETRY, 502)]
        )
    assert await _row_and_steps(engine) == (
        ("RETRYING", 2, 0, 502, "WEBHOOK", False),
        ["delivery:eff_seq:0:1", "delivery:eff_seq:0:2"],
    )
    async with make.begin() as session:  # attempt 1 again, stored late (another worker's copy)
        await deliveries.store_delivery_results(session, "WEBHOOK", [_delivery(1, 0, DELIVERED, 200)])
    assert (await _row_and_steps(engine))[0] == ("RETRYING", 2, 0, 502, "WEBHOOK", False)
    async with make.begin() as session:  # attempt 3 dies; in the same batch a late attempt 2 changes nothing
        await deliveries.store_delivery_results(
            session, "WEBHOOK", [_delivery(3, 0, DEAD, 500), _delivery(2, 0, DELIVERED, 200)]
        )
    assert (await _row_and_steps(engine))[0] == ("DEAD", 3, 0, 500, "WEBHOOK", True)
    async with make.begin() as session:  # the replay delivers: the item stays for another replay
        await deliveries.store_delivery_results(session, "WEBHOOK", [_delivery(1, 1, DELIVERED, 204)])
    assert await _row_and_steps(engine) == (
        ("DELIVERED", 1, 1, 204, "WEBHOOK", True),
        ["delivery:eff_seq:0:1", "delivery:eff_seq:0:2", "delivery:eff_seq:0:3", "delivery:eff_seq:1:1"],
    )
