"""Results people query — incidents, their timelines, event traces, control state views — written in
batches by the worker's sinks, deduplicated on effect ids (deliveries: app/store/deliveries.py). What
incidents an action creates, updates, resolves or follows up is decided in
app/domain/workflows/episodes.py; this module only persists it."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, delete, or_, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.events.publish import state_key
from app.domain.shared.ids import new_id
from app.domain.shared.milliseconds import datetime_to_ms, ms_to_datetime
from app.domain.workflows.episodes import (
    EndedEpisode,
    FoundIncident,
    episode_keys,
    lose_change,
    plan_incident_actions,
    publisher_event_ids,
    source_partition_keys,
)
from app.domain.workflows.incidents import SOURCE_CHANGES_FROM
from app.store.models import (
    ControlStateView,
    EventTraceStep,
    Incident,
    IncidentEvent,
)
from app.store.models import EndedEpisode as EndedEpisodeRow


def dialect_insert(session: AsyncSession, model: type[Any]) -> Any:
    """The INSERT of the session's dialect (SQLite or PostgreSQL: ON CONFLICT needs it) into the
    model's table. A Core statement: executed with a list of rows it is one executemany, without
    the ORM's bulk-insert bookkeeping (a third of the CPU of storing a batch of trace steps)."""
    dialect = session.bind.dialect.name if session.bind is not None else "sqlite"
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(model.__table__)


async def insert_ignoring_duplicates(session: AsyncSession, model: type[Any], rows: list[dict[str, Any]]) -> None:
    """INSERT … ON CONFLICT DO NOTHING on SQLite and PostgreSQL (every row with the same keys)."""
    if not rows:
        return
    await session.execute(dialect_insert(session, model).on_conflict_do_nothing(), rows)


@dataclass(frozen=True, slots=True)
class SinkOutcome:
    created: int
    updated: int
    duplicates: int
    effects: dict[str, str] = field(default_factory=dict)  # effect id → what it did (the trace's outcome)


async def apply_incident_actions(session: AsyncSession, actions: Sequence[dict[str, Any]]) -> SinkOutcome:
    """Persist what a batch of RUN_OPERATION_BOOK effects does to incidents, in order (the
    episode rules: app/domain/workflows/episodes.py). An effect seen before changes nothing; a
    status change whose incident someone else changed since it was read is not made
    (:func:`change_incident_status`), and its effect did what the rules say then."""
    ids = [a["effect_id"] for a in actions]
    seen = set((await session.scalars(select(IncidentEvent.id).where(IncidentEvent.id.in_(ids)))).all())
    open_by_event = await _open_incidents(session, actions)
    by_episode = await _episode_incidents(session, actions)
    found = {i.id: i for i in open_by_event.values()}
    found.update((i.id, i) for rows in by_episode.values() for i in rows)
    plan = plan_incident_actions(
        actions,
        seen,
        {k: _chain(rows) for k, rows in by_episode.items()},
        {k: _found(i) for k, i in open_by_event.items()},
        await _ended_episodes(session, actions),
    )
    incidents = [_incident(incident_id, action) for incident_id, action in plan.created]
    new = {i.id: i for i in incidents}
    found.update(new)
    for incident_id, action in plan.reopened_by.items():  # its opening action, arrived after later ones
        opened = found[incident_id]  # (one this batch created, too)
        opened.event_id, opened.server_event_id = action.get("publisher_event_id"), action["event_id"]
        opened.title, opened.created_at = action["title"], ms_to_datetime(action["accepted_ms"])
    for incident_id, at_ms in plan.acknowledged.items():  # those read from the store: plan.changes below
        if incident_id in new:
            new[incident_id].status, new[incident_id].acknowledged_at = "ACKNOWLEDGED", ms_to_datetime(at_ms)
    for incident_id, at_ms in plan.resolved.items():
        if incident_id in new:
            new[incident_id].status, new[incident_id].resolved_at = "RESOLVED", ms_to_datetime(at_ms)
    session.add_all(incidents)
    await session.flush()
    for change in plan.changes:
        at = ms_to_datetime(change.at_ms)
        if not await change_incident_status(session, change.incident_id, change.status, at, change.from_statuses):
            lose_change(plan, change)
    session.add_all(
        IncidentEvent(
            id=e.id,
            incident_id=e.incident_id,
            kind=e.kind,
            message=e.message,
            server_event_id=e.server_event_id,
            created_at=ms_to_datetime(e.at_ms),
        )
        for e in plan.entries
    )
    await insert_ignoring_duplicates(
        session,
        EndedEpisodeRow,
        [
            {
                "episode_key": episode,
                "workflow_id": workflow,
                "effect_id": end.effect_id,
                "server_event_id": end.server_event_id,
                "message": end.message,
                "resolved_at": ms_to_datetime(end.resolved_ms),
            }
            for (episode, workflow), end in plan.ended.items()
        ],
    )
    if plan.forget:
        keys = tuple_(EndedEpisodeRow.episode_key, EndedEpisodeRow.workflow_id)
        await session.execute(delete(EndedEpisodeRow).where(keys.in_(sorted(plan.forget))))
    await session.flush()
    return SinkOutcome(
        created=len(plan.created), updated=plan.updated, duplicates=plan.duplicates, effects=plan.effects
    )


def _found(incident: Incident, previous: FoundIncident | None = None) -> FoundIncident:
    """What the episode rules need of a stored incident."""
    resolved = incident.resolved_at
    return FoundIncident(
        incident.id,
        incident.status,
        datetime_to_ms(incident.created_at),
        datetime_to_ms(resolved) if resolved else None,
        previous,
    )


def _chain(rows: Sequence[Incident]) -> FoundIncident:
    """The newest incident of an episode, each one linked to the one before it (oldest first in ``rows``)."""
    newest: FoundIncident | None = None
    for incident in rows:
        newest = _found(incident, newest)
    assert newest is not None
    return newest


def _incident(incident_id: str, action: dict[str, Any]) -> Incident:
    """The incident an action opens."""
    return Incident(
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
        created_at=ms_to_datetime(action["accepted_ms"]),
        resolved_at=None,
        episode_key=action.get("episode_key"),
    )


async def change_incident_status(
    session: AsyncSession, incident_id: str, status: str, at: datetime, from_statuses: Collection[str]
) -> bool:
    """Change the incident to ``status`` at ``at`` if it is still in one of ``from_statuses``, in one
    conditional write; whether it was. Of concurrent changes of one incident (sink batches, people,
    a topic change) exactly one finds it in such a status and changes it, on SQLite (writers take
    turns) and PostgreSQL (the row's writer waits for the other and checks the status again);
    the caller writes the timeline entry only when this answers True. Loaded instances of the
    incident are not updated."""
    values: dict[str, Any] = {"status": status, "resolved_at": at if status == "RESOLVED" else None}
    if status == "ACKNOWLEDGED":
        values["acknowledged_at"] = at
    done = await session.execute(
        update(Incident)
        .where(Incident.id == incident_id, Incident.status.in_(sorted(from_statuses)))
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    return getattr(done, "rowcount", 0) == 1


async def resolve_episode_incidents(session: AsyncSession, topic_id: str, message: str, author_id: str) -> int:
    """Resolve every open incident of a control episode of ``topic_id`` (any organization's: a
    shared topic's receivers' too), each with a timeline entry saying why; how many (one resolved
    meanwhile by someone else is not counted, nor given an entry)."""
    now = datetime.now(UTC)
    rows = (
        await session.scalars(
            select(Incident)
            .where(Incident.topic_id == topic_id, Incident.episode_key.is_not(None), Incident.status != "RESOLVED")
            .order_by(Incident.created_at, Incident.id)
        )
    ).all()
    resolved = 0
    for incident in rows:
        if not await change_incident_status(session, incident.id, "RESOLVED", now, SOURCE_CHANGES_FROM["RESOLVED"]):
            continue
        resolved += 1
        session.add(
            IncidentEvent(
                id=new_id("iev"),
                incident_id=incident.id,
                kind="RESOLVED",
                message=message,
                author_id=author_id,
                created_at=now,
            )
        )
    return resolved


async def _episode_incidents(
    session: AsyncSession, actions: Sequence[dict[str, Any]]
) -> dict[tuple[str, str], list[Incident]]:
    """Incidents of the batch's episodes, by (episode, workflow), oldest first (the last is the
    newest: a follow-up's), in one query."""
    episodes = episode_keys(actions)
    if not episodes:
        return {}
    rows = await session.scalars(
        select(Incident).where(Incident.episode_key.in_(episodes)).order_by(Incident.created_at, Incident.id)
    )
    found: dict[tuple[str, str], list[Incident]] = {}
    for incident in rows:
        found.setdefault((incident.episode_key or "", incident.workflow_id), []).append(incident)
    return found


async def _ended_episodes(
    session: AsyncSession, actions: Sequence[dict[str, Any]]
) -> dict[tuple[str, str], EndedEpisode]:
    """The batch's episodes whose RESOLVE came before any incident of theirs, by (episode, workflow)."""
    episodes = episode_keys(actions)
    if not episodes:
        return {}
    rows = await session.scalars(select(EndedEpisodeRow).where(EndedEpisodeRow.episode_key.in_(episodes)))
    return {
        (r.episode_key, r.workflow_id): EndedEpisode(
            r.effect_id, r.server_event_id, datetime_to_ms(r.resolved_at), r.message
        )
        for r in rows
    }


async def _open_incidents(session: AsyncSession, actions: Sequence[dict[str, Any]]) -> dict[tuple[str, str], Incident]:
    """Single events: open incidents by (workflow, publisher ``event.id``) — or, for a resolve or an
    acknowledge without one, by (workflow, partition key) among those of no ``event.id``, the
    newest kept — in one query per batch."""
    publisher_ids, partition_keys = publisher_event_ids(actions), source_partition_keys(actions)
    if not publisher_ids and not partition_keys:
        return {}
    named = Incident.event_id.in_(publisher_ids)
    by_partition = and_(Incident.event_id.is_(None), Incident.partition_key.in_(partition_keys))
    rows = await session.scalars(
        select(Incident)
        .where(or_(named, by_partition), Incident.status != "RESOLVED", Incident.episode_key.is_(None))
        .order_by(Incident.created_at, Incident.id)
    )
    return {(i.workflow_id, i.event_id or i.partition_key or ""): i for i in rows}


async def record_trace_steps(session: AsyncSession, steps: Sequence[dict[str, Any]]) -> None:
    rows = [
        {
            "event_id": s["event_id"],
            "step": s["step"],
            "organization_id": s["organization_id"],
            "seq": s["seq"],
            "detail": s["detail"],
            "recorded_at": ms_to_datetime(s["at_ms"]),
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
    rows = [
        {
            "key": v["key"],
            "organization_id": v["organization_id"],
            "topic_id": v["topic_id"],
            "status": v["status"],
            "partition_key": v["partition_key"] or "",
            "seq": v["seq"],
            "view": v["view"],
            "updated_at": ms_to_datetime(at_ms),
        }
        for v in newest.values()
    ]
    stmt = dialect_insert(session, ControlStateView)
    stmt = stmt.on_conflict_do_update(
        index_elements=[stmt.table.c.key],
        set_={"seq": stmt.excluded.seq, "view": stmt.excluded.view, "updated_at": stmt.excluded.updated_at},
        where=stmt.table.c.seq < stmt.excluded.seq,
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
