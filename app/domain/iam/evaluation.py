"""The IAM decision: which binding, through which role, grants a permission on a resource — pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.domain.iam.permissions import is_concrete_permission
from app.domain.iam.resource_names import PATTERN_CACHE, pattern_covers, pattern_or_none
from app.domain.iam.roles import Role


@dataclass(frozen=True, slots=True)
class Binding:
    """A role granted to a principal on a resource name (pattern)."""

    resource: str
    role_id: str


@dataclass(frozen=True, slots=True)
class Grant:
    """The binding, and the id of its role, that give a permission."""

    binding: Binding
    role_id: str


def evaluate(bindings: Sequence[Binding], roles: Mapping[str, Role], permission: str, resource: str) -> Grant | None:
    """The first binding covering ``resource`` whose role grants ``permission``; invalid names are skipped."""
    if not is_concrete_permission(permission):
        return None
    for binding in bindings:
        pattern = PATTERN_CACHE.get(binding.resource) or pattern_or_none(binding.resource)
        if pattern is None or not resource.startswith(pattern.literal) or not pattern.matches(resource):
            continue
        role = roles.get(binding.role_id)
        if role is not None and role.grants(permission):
            return Grant(binding=binding, role_id=role.id)
    return None


def holds_every_permission(bindings: Sequence[Binding], roles: Mapping[str, Role], pattern: str) -> bool:
    """Whether a role with every permission covers every name ``pattern`` can match (granting the
    owner role hands out every permission, so only such a holder may)."""
    return any(
        (role := roles.get(binding.role_id)) is not None
        and role.every_permission
        and pattern_covers(binding.resource, pattern)
        for binding in bindings
    )


def evaluate_pattern(
    bindings: Sequence[Binding], roles: Mapping[str, Role], permission: str, pattern: str
) -> Grant | None:
    """Like :func:`evaluate`, for every name a binding pattern can match (see :func:`pattern_covers`)."""
    for binding in bindings:
        role = roles.get(binding.role_id)
        if role is not None and role.grants(permission) and pattern_covers(binding.resource, pattern):
            return Grant(binding=binding, role_id=role.id)
    return None
