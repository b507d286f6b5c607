"""The audit log: who changed which account, token, credential, role, binding or policy."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.ids import new_id
from app.domain.principal import Principal
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
    session.add(
        AuditEntry(
            id=new_id("aud"),
            organization_id=org_id or principal.organization_id,
            actor_kind=principal.kind,
            actor_id=principal.account_id,
            action=action,
            target_type=target_type,
            target_id=target_id,
            detail=detail or {},
            at=utcnow(),
        )
    )
