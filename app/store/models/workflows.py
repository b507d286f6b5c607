"""Workflow topics with their integration keys, workflows and operation books: the configuration the
worker decides with."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import Base


class WorkflowTopic(Base):
    __tablename__ = "workflow_topics"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(200))
    spec: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(20), default="ACTIVE")
    created_at: Mapped[datetime]
    __table_args__ = (UniqueConstraint("organization_id", "key", name="uq_workflow_topics_org_key"),)


class IntegrationKey(Base):
    """A PagerDuty Events v2 ``routing_key`` bound to one workflow topic: only its SHA-256 is kept."""

    __tablename__ = "integration_keys"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40), index=True)
    topic_id: Mapped[str] = mapped_column(ForeignKey("workflow_topics.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class OperationBook(Base):
    __tablename__ = "operation_books"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    incident_title_template: Mapped[str] = mapped_column(Text)
    member_user_ids: Mapped[list[Any]] = mapped_column(default=list)
    member_group_ids: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime]


class Workflow(Base):
    __tablename__ = "workflows"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    # null: detached, its (shared) topic deleted by the organization owning it (status INACTIVE)
    topic_id: Mapped[str | None] = mapped_column(ForeignKey("workflow_topics.id"), index=True, nullable=True)
    name: Mapped[str] = mapped_column(String(200))
    mode: Mapped[str] = mapped_column(String(10))
    status: Mapped[str] = mapped_column(String(20), default="ACTIVE")
    filter: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    sites: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    actions: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime]
