"""SQLAlchemy 2 models of the config store and of the results people query."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite hands back naive ones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        # SQLite keeps an aware value's wall time and drops its offset; read back as UTC, a value
        # written with another offset would move by that offset. Every value is stored in UTC.
        if value is not None and value.tzinfo is not None:
            return value.astimezone(UTC)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON, datetime: UTCDateTime()}


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
    __table_args__ = (Index("ix_event_trace_steps_recorded_at", "recorded_at"),)  # retention


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


class UserCredential(Base):
    """A person's sign-in secrets (issue 34): never returned, never logged."""

    __tablename__ = "user_credentials"
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    password_hash: Mapped[str | None] = mapped_column(String(200))
    password_changed_at: Mapped[datetime | None]
    totp_secret: Mapped[str | None] = mapped_column(String(64))  # confirmed second factor
    totp_pending_secret: Mapped[str | None] = mapped_column(String(64))  # enrolment not yet confirmed
    totp_last_step: Mapped[int] = mapped_column(BigInteger, default=0)  # a code's time step is used once
    recovery_code_hashes: Mapped[list[Any]] = mapped_column(default=list)


class SignInToken(Base):
    """A one-time secret: magic link, password reset, invitation, or a sign-in's pending step."""

    __tablename__ = "signin_tokens"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(20))
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    organization_id: Mapped[str] = mapped_column(String(40))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class UserSession(Base):
    """A completed sign-in: its access token and its console cookie are stored as SHA-256 only."""

    __tablename__ = "user_sessions"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    organization_id: Mapped[str] = mapped_column(String(40), index=True)
    methods: Mapped[list[Any]] = mapped_column(default=list)  # e.g. ["password", "totp"]
    access_token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    cookie_hash: Mapped[str] = mapped_column(String(64), unique=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    address: Mapped[str] = mapped_column(String(64), default="")
    user_agent: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime]
    access_expires_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    ended_at: Mapped[datetime | None]
    end_reason: Mapped[str | None] = mapped_column(String(40))


class WebAuthnCredential(Base):
    """A user's authenticator (several per user); its sign counter only grows."""

    __tablename__ = "webauthn_credentials"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    credential_id: Mapped[str] = mapped_column(String(1400), unique=True)  # base64url
    public_key: Mapped[str] = mapped_column(Text)  # base64url COSE key
    sign_count: Mapped[int] = mapped_column(BigInteger, default=0)
    name: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None]
