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
    open_by_event = await _open_incidents(session, actions)
    created = updated = duplicates = 0
    incidents: list[Incident] = []
    entries: list[IncidentEvent] = []
    for action in actions:
        eff = action["effect_id"]
        if eff in seen:
            duplicates += 1
            continue
        seen.add(eff)
        when = _ts(action["accepted_ms"])
        publisher_id = action.get("publisher_event_id")
        incident_id = open_by_event.get((action["workflow_id"], publisher_id)) if publisher_id else None
        kind = "UPDATED"
        if incident_id is None:
            kind = "CREATED"
            incident_id = "inc_" + eff.partition("_")[2]
            incidents.append(
                Incident(
                    id=incident_id,
                    organization_id=action["organization_id"],
                    title=action["title"],
                    status="OPEN",
                    operation_book_id=action["operation_book_id"],
                    workflow_id=action["workflow_id"],
                    topic_id=action["topic_id"],
                    partition_key=action.get("partition_key"),
                    event_id=publisher_id,
                    server_event_id=action["event_id"],
                    mode=action["mode"],
                    member_user_ids=action.get("member_user_ids", []),
                    member_group_ids=action.get("member_group_ids", []),
                    created_at=when,
                    resolved_at=None,
                )
            )
            if publisher_id:
                open_by_event[(action["workflow_id"], publisher_id)] = incident_id
            created += 1
        else:
            updated += 1
        entries.append(
            IncidentEvent(
                id=eff,
                incident_id=incident_id,
                kind=kind,
                message=action["title"],
                server_event_id=action["event_id"],
                created_at=when,
            )
        )
    session.add_all(incidents)
    await session.flush()
    session.add_all(entries)
    await session.flush()
    return SinkOutcome(created=created, updated=updated, duplicates=duplicates)


async def _open_incidents(session: AsyncSession, actions: Sequence[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """BYPASS: open incidents by (workflow, publisher ``event.id``), in one query per batch."""
    publisher_ids = {a["publisher_event_id"] for a in actions if a.get("publisher_event_id")}
    if not publisher_ids:
        return {}
    rows = await session.execute(
        select(Incident.id, Incident.workflow_id, Incident.event_id).where(
            Incident.event_id.in_(publisher_ids), Incident.status != "RESOLVED"
        )
    )
    return {(workflow_id, event_id or ""): incident_id for incident_id, workflow_id, event_id in rows}


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
