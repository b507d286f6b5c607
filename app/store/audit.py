"""The audit log: who changed which account, token, credential, role, binding or policy."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.principal import Principal
from app.domain.shared.ids import new_id
from app.store.accounts import utcnow
from app.store.models import AuditEntry


def record(
    session: AsyncSession,
    principal: Principal,
    action: str,
    target_type: str,
    target_id: str,
    detail: dict[str, Any] | None = None,
    *,
    org_id: str | None = None,
) -> None:
    """Add an entry to the caller's transaction; ``detail`` must never hold a secret."""
    record_as(
        session,
        org_id or principal.organization_id,
        (principal.kind, principal.account_id),
        action,
        target_type,
        target_id,
        detail,
    )


def record_as(
    session: AsyncSession,
    org_id: str,
    actor: tuple[str, str],
    action: str,
    target_type: str,
    target_id: str,
    detail: dict[str, Any] | None = None,
) -> None:
    """An entry in ``org_id``'s log by ``actor`` (kind, id): e.g. another organization whose change
    reached one of this organization's resources. ``detail`` must never hold a secret."""
    session.add(
        AuditEntry(
            id=new_id("aud"),
            organization_id=org_id,
            actor_kind=actor[0],
            actor_id=actor[1],
            action=action,
            target_type=target_type,
            target_id=target_id,
            detail=detail or {},
            at=utcnow(),
        )
    )
