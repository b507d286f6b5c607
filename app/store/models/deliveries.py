"""Deliveries of actions: each delivery with its attempts, the push outbox, and the disabled webhook
endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Index,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import Base


class Delivery(Base):
    """One push, e-mail or webhook effect (``id`` is its effect id): where it stands, and the
    item to send again when a dead-lettered delivery is replayed."""

    __tablename__ = "deliveries"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    event_id: Mapped[str] = mapped_column(String(40), index=True)
    workflow_id: Mapped[str] = mapped_column(String(40))
    action_index: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(20))  # PUSH | EMAIL | WEBHOOK
    target: Mapped[str] = mapped_column(Text, default="")
    mode: Mapped[str] = mapped_column(String(10))
    decision: Mapped[str] = mapped_column(String(10))
    # PENDING, RETRYING, DELIVERED, DEAD (retries exhausted), DISABLED (410), EXPIRED, REFUSED
    status: Mapped[str] = mapped_column(String(20))
    attempts: Mapped[int] = mapped_column(BigInteger, default=0)
    replays: Mapped[int] = mapped_column(BigInteger, default=0)
    last_status_code: Mapped[int | None] = mapped_column(BigInteger, default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    item: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    __table_args__ = (Index("ix_deliveries_org_status", "organization_id", "status", "updated_at"),)


class PushNotification(Base):
    """What the outbox push provider recorded: the APNs and FCM payloads it would send."""

    __tablename__ = "push_notifications"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # the delivery's effect id
    organization_id: Mapped[str] = mapped_column(String(40))
    event_id: Mapped[str] = mapped_column(String(40))
    workflow_id: Mapped[str] = mapped_column(String(40))
    mode: Mapped[str] = mapped_column(String(10))
    user_ids: Mapped[list[Any]] = mapped_column(default=list)
    group_ids: Mapped[list[Any]] = mapped_column(default=list)
    title: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[str] = mapped_column(Text, default="")
    apns: Mapped[dict[str, Any]] = mapped_column(default=dict)
    fcm: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime]
    __table_args__ = (
        Index("ix_push_org_created", "organization_id", "created_at"),
        Index("ix_push_created", "created_at"),  # retention
    )


class DisabledEndpoint(Base):
    """A webhook action whose receiver answered 410 Gone: no delivery until the workflow is updated."""

    __tablename__ = "disabled_endpoints"
    workflow_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    action_index: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    url: Mapped[str] = mapped_column(Text)
    disabled_at: Mapped[datetime]
    reason: Mapped[str] = mapped_column(Text, default="")
