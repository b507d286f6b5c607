"""Direct access to a stack's database, for arranging states the API cannot reach quickly
(an already expired token, an incident without running the worker)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.resource_names import organization_name
from app.domain.shared.ids import new_id
from app.store import accounts
from app.store.db import create_engine, sessionmaker
from app.store.models import EventTraceStep, Incident
from tests.support.stack import Stack

T = TypeVar("T")


def in_db(stack: Stack, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    async def run() -> T:
        engine = create_engine(
            stack.env.get("TOCSIN_DATABASE_URL") or f"sqlite+aiosqlite:///{stack.var_dir / 'tocsin.db'}"
        )
        try:
            async with sessionmaker(engine).begin() as session:
                return await work(session)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def expired_owner_token(stack: Stack) -> str:
    """A token of an owner service account that expired a minute ago."""

    async def make(session: AsyncSession) -> str:
        account = await accounts.create_account(session, stack.org, kind="service_account", name="expired")
        await accounts.bind(session, stack.org, "service_account", account.id, organization_name(stack.org), "owner")
        _row, plain = await accounts.issue_token(session, account, expires_at=datetime.now(UTC) - timedelta(minutes=1))
        return plain

    return in_db(stack, make)


def insert_incident(
    stack: Stack, *, member_user_ids: list[str] | None = None, member_group_ids: list[str] | None = None
) -> str:
    """An incident as the worker would store it (the API has no route that creates one)."""

    async def make(session: AsyncSession) -> str:
        incident = Incident(
            id=new_id("inc"),
            organization_id=stack.org,
            title="arranged",
            status="OPEN",
            operation_book_id="obk_x",
            workflow_id="wfl_x",
            topic_id="wtp_x",
            partition_key=None,
            event_id=None,
            server_event_id="evt_x",
            mode="ACTUAL",
            member_user_ids=member_user_ids or [],
            member_group_ids=member_group_ids or [],
            created_at=datetime.now(UTC),
            resolved_at=None,
        )
        session.add(incident)
        return incident.id

    return in_db(stack, make)


def insert_trace(
    stack: Stack,
    topic_id: str,
    *,
    at: datetime,
    org_id: str | None = None,
    status: str = "ACTUAL",
    partition_key: str | None = None,
    decision: str | None = "NOTIFY",
    event_id: str | None = None,
) -> str:
    """The trace of an event as the worker's trace sink stores it (app/domain/workflows/workflow_stage.py):
    its ``accepted`` step, then its ``control`` step with the decision, or for ``decision=None`` the
    ``idempotency`` step of a duplicate (no decision); every step at the event's accepted time."""
    event = event_id or new_id("evt")
    org = org_id or stack.org
    accepted = {"status": status, "partition_key": partition_key, "publisher_event_id": None, "topic_id": topic_id}
    second = (
        ("control", {"policy": "BYPASS", "decision": decision})
        if decision is not None
        else ("idempotency", {"key": "k", "outcome": "duplicate", "duplicate_of": "evt_first"})
    )

    async def make(session: AsyncSession) -> str:
        for seq, (step, detail) in enumerate((("accepted", accepted), second)):
            session.add(
                EventTraceStep(event_id=event, step=step, organization_id=org, seq=seq, detail=detail, recorded_at=at)
            )
        return event

    return in_db(stack, make)
