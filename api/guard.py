"""The privilege-escalation guard: nobody hands out a permission they do not hold (403 IAM-002)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.domain.iam.evaluation import evaluate_pattern, holds_every_permission
from app.domain.iam.permissions import escalation_violations
from app.domain.iam.principal import Principal
from app.domain.iam.roles import Role
from app.errors import ChangeRefused, InvalidInput


def ensure_holds(principal: Principal, permissions: Iterable[str], resource: str, what: str) -> None:
    """Refuse unless the caller holds every one of ``permissions`` on every name ``resource`` can match."""
    missing = escalation_violations(
        permissions,
        lambda p: evaluate_pattern(principal.bindings, principal.roles, p, resource) is not None,
    )
    if missing:
        raise ChangeRefused(
            f"{what} would give permissions you do not hold on {resource}",
            details={"missing_permissions": missing[:20]},
        )


def ensure_can_grant(principal: Principal, roles: Mapping[str, Role], role_id: str, resource: str) -> None:
    role = roles.get(role_id)
    if role is None:
        raise InvalidInput(
            f"unknown role {role_id!r}", details={"fields": [{"field": "role_id", "message": "unknown"}]}
        )
    ensure_holds(principal, role.permissions, resource, f"granting role {role_id}")
    if role.every_permission and not holds_every_permission(principal.bindings, principal.roles, resource):
        raise ChangeRefused(
            f"granting role {role_id} would give every permission on {resource}; you do not hold them all there",
            details={"missing_permissions": ["every permission (role owner)"]},
        )


def ensure_can_act_as(principal: Principal, target: Principal) -> None:
    """Minting a token for (or attaching a credential to) an account gives everything it has."""
    if target.platform_owner and not principal.platform_owner:
        raise ChangeRefused("only the platform owner can act for the platform owner")
    for binding in target.bindings:
        ensure_can_grant(principal, target.roles, binding.role_id, binding.resource)
