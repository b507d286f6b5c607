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

from app.domain.publish import state_key
from app.store.models import ControlStateView, EventTraceStep, Incident, IncidentEvent


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
    """Create, update or resolve incidents for a batch of RUN_OPERATION_BOOK effects, in order.

    One incident per workflow and control episode (``episode_key``): the NOTIFY that opens an
    episode creates it, a later NOTIFY adds a timeline entry, RESOLVE marks it RESOLVED. Single
    events (BYPASS, DELTA) create one each, or update the open incident of the same publisher
    ``event.id``. Each effect id becomes a timeline entry id, so an effect seen before (a
    redelivery after a worker restart) is counted as a duplicate and changes nothing.
    """
    ids = [a["effect_id"] for a in actions]
    seen = set((await session.scalars(select(IncidentEvent.id).where(IncidentEvent.id.in_(ids)))).all())
    open_by_event = await _open_incidents(session, actions)
    by_episode = await _episode_incidents(session, actions)
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
        episode = action.get("episode_key")
        wf = action["workflow_id"]
        if episode:
            incident = by_episode.get((episode, wf))
        else:
            incident = open_by_event.get((wf, publisher_id)) if publisher_id else None
        if action.get("decision") == "RESOLVE":
            if incident is None:
                continue  # no incident in this episode (e.g. the workflow was added after it opened)
            if incident.status != "RESOLVED":
                incident.status = "RESOLVED"
                incident.resolved_at = when
            entries.append(
                _entry(eff, incident.id, "RESOLVED", f"released: {action.get('reason') or 'resolved'}", action)
            )
            updated += 1
            continue
        if incident is not None:
            entries.append(_entry(eff, incident.id, "UPDATED", _update_message(action), action))
            updated += 1
            continue
        incident = Incident(
            id="inc_" + eff.partition("_")[2],
            organization_id=action["organization_id"],
            title=action["title"],
            status="OPEN",
            operation_book_id=action["operation_book_id"],
            workflow_id=wf,
            topic_id=action["topic_id"],
            partition_key=action.get("partition_key"),
            event_id=publisher_id,
            server_event_id=action["event_id"],
            mode=action["mode"],
            member_user_ids=action.get("member_user_ids", []),
            member_group_ids=action.get("member_group_ids", []),
            created_at=when,
            resolved_at=None,
            episode_key=episode,
        )
        incidents.append(incident)
        if episode:
            by_episode[(episode, wf)] = incident
        elif publisher_id:
            open_by_event[(wf, publisher_id)] = incident
        created += 1
        entries.append(_entry(eff, incident.id, "CREATED", action["title"], action))
    session.add_all(incidents)
    await session.flush()
    session.add_all(entries)
    await session.flush()
    return SinkOutcome(created=created, updated=updated, duplicates=duplicates)


def _entry(effect_id: str, incident_id: str, kind: str, message: str, action: dict[str, Any]) -> IncidentEvent:
    return IncidentEvent(
        id=effect_id,
        incident_id=incident_id,
        kind=kind,
        message=message,
        server_event_id=action["event_id"],
        created_at=_ts(action["accepted_ms"]),
    )


def _update_message(action: dict[str, Any]) -> str:
    reason = action.get("reason")
    return f"{action['title']} ({reason})" if reason and action.get("episode_key") else action["title"]


async def _episode_incidents(
    session: AsyncSession, actions: Sequence[dict[str, Any]]
) -> dict[tuple[str, str], Incident]:
    """Incidents of the batch's episodes, by (episode, workflow), in one query."""
    episodes = {a["episode_key"] for a in actions if a.get("episode_key")}
    if not episodes:
        return {}
    rows = await session.scalars(select(Incident).where(Incident.episode_key.in_(episodes)))
    return {(i.episode_key or "", i.workflow_id): i for i in rows}


async def _open_incidents(session: AsyncSession, actions: Sequence[dict[str, Any]]) -> dict[tuple[str, str], Incident]:
    """Single events: open incidents by (workflow, publisher ``event.id``), in one query per batch."""
    publisher_ids = {
        a["publisher_event_id"] for a in actions if a.get("publisher_event_id") and not a.get("episode_key")
    }
    if not publisher_ids:
        return {}
    rows = await session.scalars(
        select(Incident).where(
            Incident.event_id.in_(publisher_ids), Incident.status != "RESOLVED", Incident.episode_key.is_(None)
        )
    )
    return {(i.workflow_id, i.event_id or ""): i for i in rows}


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


async def upsert_control_views(session: AsyncSession, views: Sequence[dict[str, Any]], at_ms: int) -> None:
    """Keep the newest view of each control state (by its ``seq``); older redeliveries change nothing."""
    newest: dict[str, dict[str, Any]] = {}
    for v in views:
        if v["key"] not in newest or v["seq"] > newest[v["key"]]["seq"]:
            newest[v["key"]] = v
    if not newest:
        return
    dialect = session.bind.dialect.name if session.bind is not None else "sqlite"
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    rows = [
        {
            "key": v["key"],
            "organization_id": v["organization_id"],
            "topic_id": v["topic_id"],
            "status": v["status"],
            "partition_key": v["partition_key"] or "",
            "seq": v["seq"],
            "view": v["view"],
            "updated_at": _ts(at_ms),
        }
        for v in newest.values()
    ]
    stmt = insert(ControlStateView)
    stmt = stmt.on_conflict_do_update(
        index_elements=[ControlStateView.key],
        set_={"seq": stmt.excluded.seq, "view": stmt.excluded.view, "updated_at": stmt.excluded.updated_at},
        where=ControlStateView.seq < stmt.excluded.seq,
    )
    await session.execute(stmt, rows)


async def control_view(
    session: AsyncSession, org_id: str, topic_id: str, status: str, partition_key: str
) -> ControlStateView | None:
    view = await session.get(ControlStateView, state_key(org_id, topic_id, status, partition_key))
    return view if view is not None and view.organization_id == org_id else None


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
