"""SQLAlchemy 2 models of the config store and of the results people query, one module per concept
(base, iam, workflows, results, deliveries, people); every model is importable from here, and
importing this package registers every table on ``Base.metadata`` (migrations, ``create_all``)."""

from __future__ import annotations

from app.store.models.base import Base, UTCDateTime
from app.store.models.deliveries import Delivery, DisabledEndpoint, PushNotification
from app.store.models.iam import (
    AccessToken,
    Account,
    AuditEntry,
    AuthenticationPolicy,
    CustomRole,
    ExchangeAttempt,
    FederatedCredential,
    Group,
    GroupMember,
    Organization,
    RoleBinding,
)
from app.store.models.people import SignInToken, UserCredential, UserSession, WebAuthnCredential
from app.store.models.results import (
    ControlStateView,
    EndedEpisode,
    EventTraceStep,
    FormAnswer,
    Incident,
    IncidentEvent,
    IncidentMember,
)
from app.store.models.workflows import IntegrationKey, OperationBook, Workflow, WorkflowTopic

__all__ = [
    "AccessToken",
    "Account",
    "AuditEntry",
    "AuthenticationPolicy",
    "Base",
    "ControlStateView",
    "CustomRole",
    "Delivery",
    "DisabledEndpoint",
    "EndedEpisode",
    "EventTraceStep",
    "ExchangeAttempt",
    "FederatedCredential",
    "FormAnswer",
    "Group",
    "GroupMember",
    "Incident",
    "IncidentEvent",
    "IncidentMember",
    "IntegrationKey",
    "OperationBook",
    "Organization",
    "PushNotification",
    "RoleBinding",
    "SignInToken",
    "UTCDateTime",
    "UserCredential",
    "UserSession",
    "WebAuthnCredential",
    "Workflow",
    "WorkflowTopic",
]
