"""The results people query: incidents with their timeline, members and form answers, ended
episodes, the control state views and the event traces."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ForeignKey,
    Index,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import Base


class Incident(Base):
    __tablename__ = "incidents"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    title: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default="OPEN")
    operation_book_id: Mapped[str] = mapped_column(String(40))
    workflow_id: Mapped[str] = mapped_column(String(40))
    topic_id: Mapped[str] = mapped_column(String(40))
    partition_key: Mapped[str | None] = mapped_column(String(256))
    event_id: Mapped[str | None] = mapped_column(String(256))
    server_event_id: Mapped[str] = mapped_column(String(40))
    mode: Mapped[str] = mapped_column(String(10))
    member_user_ids: Mapped[list[Any]] = mapped_column(default=list)
    member_group_ids: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime]
    acknowledged_at: Mapped[datetime | None] = mapped_column(default=None)
    resolved_at: Mapped[datetime | None]
    # The control episode this incident belongs to (METRIC / SET topics); None for single events.
    episode_key: Mapped[str | None] = mapped_column(String(64), default=None)
    __table_args__ = (
        Index("ix_incidents_org_created", "organization_id", "created_at"),
        Index("ix_incidents_workflow_event", "workflow_id", "event_id"),
        Index("ix_incidents_episode", "episode_key", "workflow_id"),
    )


class IncidentEvent(Base):
    """One entry of an incident's timeline; ``id`` is an effect id (deduplicated)."""

    __tablename__ = "incident_events"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    incident_id: Mapped[str] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    message: Mapped[str] = mapped_column(Text, default="")
    author_id: Mapped[str | None] = mapped_column(String(40), default=None)
    server_event_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime]


class EndedEpisode(Base):
    """A control episode whose RESOLVE reached the incident sink before any NOTIFY of it had opened
    its workflow's incident (app/domain/workflows/episodes.py EndedEpisode): kept until that NOTIFY comes and
    opens the incident RESOLVED, then deleted (the incident keeps the end)."""

    __tablename__ = "ended_episodes"
    episode_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    workflow_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    effect_id: Mapped[str] = mapped_column(String(40))  # the RESOLVE's: its timeline entry's id
    server_event_id: Mapped[str] = mapped_column(String(40))
    message: Mapped[str] = mapped_column(Text)
    resolved_at: Mapped[datetime]


class ControlStateView(Base):
    """The newest control state of one (organization, topic, status, partition key), as the
    worker last reported it in a trace: a read model for the control_state route; the state
    itself lives in the worker's changelog-backed table."""

    __tablename__ = "control_state_views"
    key: Mapped[str] = mapped_column(String(1200), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    topic_id: Mapped[str] = mapped_column(String(40))
    status: Mapped[str] = mapped_column(String(10))
    partition_key: Mapped[str] = mapped_column(String(1024))
    seq: Mapped[int] = mapped_column(BigInteger)
    view: Mapped[dict[str, Any]] = mapped_column(default=dict)
    updated_at: Mapped[datetime]


class EventTraceStep(Base):
    """One step of an event's trace; ``(event_id, step)`` deduplicates redeliveries."""

    __tablename__ = "event_trace_steps"
    event_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    step: Mapped[str] = mapped_column(String(120), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    seq: Mapped[int] = mapped_column(BigInteger)
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    recorded_at: Mapped[datetime]
    # retention; migration 0013 adds ix_event_trace_steps_topic, a partial index on an expression of
    # ``detail`` written per database (the list of a topic's events: app/store/topic_events.py)
    __table_args__ = (Index("ix_event_trace_steps_recorded_at", "recorded_at"),)


class IncidentMember(Base):
    """One member of one incident binding: ``(incident, binding index, role, user or group)``."""

    __tablename__ = "incident_members"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    incident_id: Mapped[str] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"), index=True)
    binding_index: Mapped[int]
    role_id: Mapped[str] = mapped_column(String(40))
    member_kind: Mapped[str] = mapped_column(String(10))
    member_id: Mapped[str] = mapped_column(String(40))
    __table_args__ = (Index("ix_incident_members_member", "member_kind", "member_id"),)


class FormAnswer(Base):
    __tablename__ = "form_answers"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    incident_id: Mapped[str] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"), index=True)
    account_id: Mapped[str] = mapped_column(String(40))
    answers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime]
