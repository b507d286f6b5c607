"""Results people query — incidents, their timelines, event traces — written in batches
by the worker's sinks, deduplicated on effect ids."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import EventTraceStep, Incident, IncidentEvent


def _ts(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


async def insert_ignoring_duplicates(session: AsyncSession, model: type[Any], rows: list[dict[str, Any]]) -> None:
    """INSERT … ON CONFLICT DO NOTHING on SQLite and PostgreSQL."""
    if not rows:
        return
    dialect = session.bind.dialect.name if session.bind is not None else "sqlite"
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    await session.execute(insert(model).on_conflict_do_nothing(), rows)


@dataclass(frozen=True, slots=True)
class SinkOutcome:
    created: int
    updated: int
    duplicates: int


async def apply_incident_actions(session: AsyncSession, actions: Sequence[dict[str, Any]]) -> SinkOutcome:
    """Create or update incidents for a batch of RUN_OPERATION_BOOK effects.

    Each effect id becomes a timeline entry id, so an effect seen before (a redelivery
    after a worker restart) is counted as a duplicate and changes nothing.
    """
    ids = [a["effect_id"] for a in actions]
    seen = set((await session.scalars(select(IncidentEvent.id).where(IncidentEvent.id.in_(ids)))).all())
    created = updated = duplicates = 0
    open_by_event: dict[tuple[str, str], str] = {}
    for action in actions:
        eff = action["effect_id"]
        if eff in seen:
            duplicates += 1
            continue
        seen.add(eff)
        when = _ts(action["accepted_ms"])
        incident_id = await _open_incident_for(session, action, open_by_event)
        if incident_id is not None:
            session.add(
                IncidentEvent(
                    id=eff,
                    incident_id=incident_id,
                    kind="UPDATED",
                    message=action["title"],
                    server_event_id=action["event_id"],
                    created_at=when,
                )
            )
            updated += 1
            continue
        incident_id = "inc_" + eff.partition("_")[2]
        session.add(
            Incident(
                id=incident_id,
                organization_id=action["organization_id"],
                title=action["title"],
                status="OPEN",
                operation_book_id=action["operation_book_id"],
                workflow_id=action["workflow_id"],
                topic_id=action["topic_id"],
                partition_key=action.get("partition_key"),
                event_id=action.get("publisher_event_id"),
                server_event_id=action["event_id"],
                mode=action["mode"],
                member_user_ids=action.get("member_user_ids", []),
                member_group_ids=action.get("member_group_ids", []),
                created_at=when,
                resolved_at=None,
            )
        )
        await session.flush()
        session.add(
            IncidentEvent(
                id=eff,
                incident_id=incident_id,
                kind="CREATED",
                message=action["title"],
                server_event_id=action["event_id"],
                created_at=when,
            )
        )
        if action.get("publisher_event_id"):
            open_by_event[(action["workflow_id"], action["publisher_event_id"])] = incident_id
        created += 1
    await session.flush()
    return SinkOutcome(created=created, updated=updated, duplicates=duplicates)


async def _open_incident_for(
    session: AsyncSession, action: dict[str, Any], batch: dict[tuple[str, str], str]
) -> str | None:
    """BYPASS: an open incident of the same workflow with the same publisher event.id."""
    publisher_id = action.get("publisher_event_id")
    if not publisher_id:
        return None
    key = (action["workflow_id"], publisher_id)
    if key in batch:
        return batch[key]
    found = (
        await session.scalars(
            select(Incident.id).where(
                Incident.workflow_id == action["workflow_id"],
                Incident.event_id == publisher_id,
                Incident.status != "RESOLVED",
            )
        )
    ).first()
    return found


async def record_trace_steps(session: AsyncSession, steps: Sequence[dict[str, Any]]) -> None:
    rows = [
        {
            "event_id": s["event_id"],
            "step": s["step"],
            "organization_id": s["organization_id"],
            "seq": s["seq"],
            "detail": s["detail"],
            "recorded_at": _ts(s["at_ms"]),
        }
        for s in steps
    ]
    await insert_ignoring_duplicates(session, EventTraceStep, rows)


async def event_trace(session: AsyncSession, org_id: str, event_id: str) -> list[EventTraceStep]:
    return list(
        (
            await session.scalars(
                select(EventTraceStep)
                .where(EventTraceStep.event_id == event_id, EventTraceStep.organization_id == org_id)
                .order_by(EventTraceStep.seq, EventTraceStep.step)
            )
        ).all()
    )
