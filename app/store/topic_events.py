"""A topic's events, read from the trace store: there is no table of events, but every event the
worker decided has an ``accepted`` trace step (its status, partition key and topic, with the time it
was accepted) and, once decided, a ``control`` step with its decision (app/domain/workflows/workflow_stage.py).

The list reads the ``accepted`` steps of one organization and topic in time order through the
partial index ``ix_event_trace_steps_topic`` (migration 0013) on ``(organization_id, <the detail's
topic_id>, recorded_at, event_id) WHERE step = 'accepted'``; the expressions here are written as the
index writes them, literals included, so that SQLite and PostgreSQL both match it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, String, and_, func, literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute, aliased

from app.store.models import EventTraceStep

_KEY = re.compile(r"[a-z_]+")


def dialect_of(session: AsyncSession) -> str:
    return session.get_bind().dialect.name


def json_text(dialect: str, column: InstrumentedAttribute[Any], key: str) -> ColumnElement[str]:
    """The text at ``key`` of a JSON column, written as migration 0013's index writes it: a literal
    path (a bound one would not match the index's expression)."""
    if _KEY.fullmatch(key) is None:
        raise ValueError(f"not a JSON key this module reads: {key!r}")
    if dialect == "postgresql":
        return column.op("->>", return_type=String())(literal_column(f"'{key}'"))
    return func.json_extract(column, literal_column(f"'$.{key}'"), type_=String())


def _accepted() -> ColumnElement[bool]:
    return EventTraceStep.step == literal_column("'accepted'")  # the partial index's condition, as written


def topic_events(
    dialect: str,
    org_id: str,
    topic_id: str,
    *,
    status: str | None = None,
    partition_key: str | None = None,
    decision: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Select[EventTraceStep, str]:
    """``(accepted step, decision)`` of each event of the organization's topic, filtered; unordered
    (the caller orders and pages it by ``recorded_at, event_id``). The decision is ``None`` for an
    event not decided: a duplicate of an earlier idempotency key."""
    control = aliased(EventTraceStep)
    decided = json_text(dialect, control.detail, "decision")
    query = (
        select(EventTraceStep, decided.label("decision"))
        .outerjoin(control, and_(control.event_id == EventTraceStep.event_id, control.step == "control"))
        .where(
            EventTraceStep.organization_id == org_id,
            json_text(dialect, EventTraceStep.detail, "topic_id") == topic_id,
            _accepted(),
        )
    )
    if status is not None:
        query = query.where(json_text(dialect, EventTraceStep.detail, "status") == status)
    if partition_key is not None:
        query = query.where(json_text(dialect, EventTraceStep.detail, "partition_key") == partition_key)
    if decision is not None:
        query = query.where(decided == decision)
    if since is not None:
        query = query.where(EventTraceStep.recorded_at >= since)
    if until is not None:
        query = query.where(EventTraceStep.recorded_at < until)
    return query
