"""Permissions: the spec's ``service.resource:action`` pattern, ``x:*`` in role policies — pure functions."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

ACTIONS = ("list", "get", "update", "delete", "create", "publish", "fullaccess")
# ``\Z``, not ``$``: ``$`` also matches before a trailing newline.
PERMISSION_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*:(?:list|get|update|delete|create|publish|fullaccess)\Z")
_WILDCARD_PERMISSION_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*:\*\Z")

# Every permission prefix (resource) a permission may name: docs/concepts/access-control.md.
RESOURCE_PREFIXES = (
    "organization.service_account",
    "organization.service_account.access_token",
    "organization.service_account.federated_credential",
    "organization.user",
    "organization.user.access_token",
    "organization.group",
    "organization.role",
    "organization.iam_policy",
    "organization.authentication_policy",
    "organization.workflow_topic",
    "organization.workflow_topic.integration_key",
    "organization.workflow",
    "organization.operation_book",
    "organization.incident",
    "organization.event",
    "organization.audit_log",
)


def is_valid_permission(permission: str, *, allow_wildcard: bool = False) -> bool:
    """The spec's permission pattern, read with a literal dot; ``:*`` in role policies."""
    return is_concrete_permission(permission) or (
        allow_wildcard and _WILDCARD_PERMISSION_RE.match(permission) is not None
    )


@lru_cache(maxsize=1024)
def is_concrete_permission(permission: str) -> bool:
    """Whether ``permission`` is one concrete ``service.resource:action`` (no ``:*``)."""
    return PERMISSION_RE.match(permission) is not None


def covers_concrete(granted: str, wanted: str) -> bool:
    """:func:`permission_covers` for a ``wanted`` already known concrete (so a match is concrete too)."""
    return granted == wanted or (granted.endswith(":*") and wanted.rpartition(":")[0] == granted[:-2])


def permission_covers(granted: str, wanted: str) -> bool:
    """Whether a role policy entry (possibly ``x:*``) grants the concrete permission ``wanted``.

    ``x:*`` covers every action of exactly ``x``: not ``x_y:...`` nor ``x.sub:...``.
    """
    return is_concrete_permission(wanted) and covers_concrete(granted, wanted)


def expand_permission(permission: str) -> tuple[str, ...]:
    """``x:*`` as every action of ACTIONS; a concrete permission as itself; invalid as ()."""
    if is_valid_permission(permission):
        return (permission,)
    if is_valid_permission(permission, allow_wildcard=True):
        return tuple(f"{permission[:-2]}:{action}" for action in ACTIONS)
    return ()


def escalation_violations(granted_permissions: Iterable[str], caller_can: Callable[[str], bool]) -> list[str]:
    """The permissions a grant would hand out that the caller does not hold (IAM-002 if any), deduplicated.

    ``x:*`` is expanded into every action; an entry that is not a valid permission is reported as is (fail closed).
    """
    out: list[str] = []
    for entry in granted_permissions:
        expanded = expand_permission(entry)
        missing = [p for p in expanded if not caller_can(p)] if expanded else [entry]
        out += [p for p in missing if p not in out]
    return out
