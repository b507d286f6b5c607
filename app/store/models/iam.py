"""Organizations, accounts and their access tokens, groups, custom roles and IAM bindings, the
authentication policy, federated credentials, and the audit and token-exchange records."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import Base


class Organization(Base):
    __tablename__ = "organizations"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    parent_organization_id: Mapped[str | None] = mapped_column(String(40))
    partner_organization_ids: Mapped[list[Any]] = mapped_column(default=list)
    license_subscriber_organization_ids: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime]


class Account(Base):
    """A principal: ``service_account`` or ``user_account``."""

    __tablename__ = "accounts"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    email: Mapped[str | None] = mapped_column(String(320))
    status: Mapped[str] = mapped_column(String(20), default="ACTIVE")
    platform_owner: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime]


class AccessToken(Base):
    __tablename__ = "access_tokens"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    organization_id: Mapped[str] = mapped_column(String(40), index=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]


class RoleBinding(Base):
    __tablename__ = "role_bindings"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40), index=True)
    subject_kind: Mapped[str] = mapped_column(String(20))
    subject_id: Mapped[str] = mapped_column(String(40))
    resource: Mapped[str] = mapped_column(String(600))
    role_id: Mapped[str] = mapped_column(String(40))
    __table_args__ = (Index("ix_role_bindings_subject", "subject_kind", "subject_id"),)


class Group(Base):
    __tablename__ = "groups"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime]
    __table_args__ = (UniqueConstraint("organization_id", "name", name="uq_groups_org_name"),)


class GroupMember(Base):
    __tablename__ = "group_members"
    group_id: Mapped[str] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, index=True)


class CustomRole(Base):
    __tablename__ = "custom_roles"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    policies: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime]
    __table_args__ = (UniqueConstraint("organization_id", "name", name="uq_custom_roles_org_name"),)


class AuthenticationPolicy(Base):
    __tablename__ = "authentication_policies"
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True)
    policy: Mapped[dict[str, Any]] = mapped_column(default=dict)


class AuditEntry(Base):
    """Who changed what, when — never a secret."""

    __tablename__ = "audit_log"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40), index=True)
    actor_kind: Mapped[str] = mapped_column(String(20))
    actor_id: Mapped[str] = mapped_column(String(40))
    action: Mapped[str] = mapped_column(String(40))
    target_type: Mapped[str] = mapped_column(String(40))
    target_id: Mapped[str] = mapped_column(String(60))
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    at: Mapped[datetime]
    __table_args__ = (Index("ix_audit_log_at", "at"),)  # retention


class FederatedCredential(Base):
    __tablename__ = "federated_credentials"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(40), index=True)
    service_account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    display_name: Mapped[str] = mapped_column(String(200))
    issuer_url: Mapped[str] = mapped_column(String(1000))
    subject_filter: Mapped[str] = mapped_column(String(1024))
    audience: Mapped[str] = mapped_column(String(1000))
    attribute_condition: Mapped[str | None] = mapped_column(Text)
    jwks_uri: Mapped[str] = mapped_column(String(1000))
    status: Mapped[str] = mapped_column(String(20), default="ACTIVE")
    created_at: Mapped[datetime]


class ExchangeAttempt(Base):
    """One token-exchange attempt, for admins: outcome and the failing check."""

    __tablename__ = "exchange_attempts"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    credential_id: Mapped[str] = mapped_column(String(40), index=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    at: Mapped[datetime]
    outcome: Mapped[str] = mapped_column(String(20))
    failed_check: Mapped[str | None] = mapped_column(Text)
    subject: Mapped[str | None] = mapped_column(String(1024))
    client_address: Mapped[str | None] = mapped_column(String(64))
    # attempts this row stands for: 1, or the failures of one source and check in a window that
    # failed before the token proved anything (app/identity/federation.py)
    count: Mapped[int] = mapped_column(default=1, server_default="1")
    __table_args__ = (Index("ix_exchange_attempts_at", "at"),)  # retention
