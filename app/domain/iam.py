"""Permissions, roles, resource names and the IAM decision — pure functions.

A binding grants a role on a resource name; a role is a list of permissions. A name may
end in a regex tail ``<...>``: the part before it matches literally and the tail matches
the rest of the name as an anchored regular expression. A binding on an organization's
own name covers everything inside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

SERVICE_WORD = "tocsin"
ACTIONS = ("list", "get", "update", "delete", "create", "publish", "fullaccess")
PERMISSION_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*:(?:list|get|update|delete|create|publish|fullaccess)$")
_WILDCARD_PERMISSION_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*:\*$")
MAX_NAME_LENGTH = 512
MAX_TAIL_LENGTH = 64
# Characters a regex tail may use; no character classes with escapes, no backreferences.
_TAIL_ALLOWED = re.compile(r"^[A-Za-z0-9_\-/.*?()|$^]+$")
# A repeated group ``(...)*``, ``(...)+`` or ``(...){n}`` is how patterns backtrack
# catastrophically; tails never need one.
_REPEATED_GROUP = re.compile(r"\)[*+{]")

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
    "organization.workflow",
    "organization.operation_book",
    "organization.incident",
    "organization.event",
    "organization.audit_log",
)


class InvalidName(ValueError):
    """A resource name or regex tail that is malformed or unsafe."""


def is_valid_permission(permission: str, *, allow_wildcard: bool = False) -> bool:
    """The spec's permission pattern, read with a literal dot; ``:*`` in role policies."""
    if PERMISSION_RE.match(permission):
        return True
    return allow_wildcard and bool(_WILDCARD_PERMISSION_RE.match(permission))


def permission_covers(granted: str, wanted: str) -> bool:
    """Whether a role policy entry (possibly ``x:*``) grants ``wanted``."""
    if granted == wanted:
        return True
    if granted.endswith(":*"):
        return wanted.rpartition(":")[0] == granted[:-2]
    return False


def organization_name(org_id: str) -> str:
    return f"crn:{SERVICE_WORD}:organizations:{org_id}"


def resource_name(org_id: str, resource_type: str | None = None, resource_id: str | None = None) -> str:
    """``crn:tocsin:organizations:<org>[:<type>[/<id>]]``."""
    name = organization_name(org_id)
    if resource_type is None:
        return name
    name = f"{name}:{resource_type}"
    return name if resource_id is None else f"{name}/{resource_id}"


@dataclass(frozen=True, slots=True)
class NamePattern:
    """A binding's resource name, split into its literal part and optional regex tail."""

    literal: str
    tail: re.Pattern[str] | None

    def matches(self, name: str) -> bool:
        if len(name) > MAX_NAME_LENGTH or not name.startswith(self.literal):
            return False
        rest = name[len(self.literal) :]
        if self.tail is not None:
            return self.tail.fullmatch(rest) is not None
        # The organization's own name covers everything inside it.
        return rest == "" or (self.literal.count(":") == 3 and rest.startswith(":"))


@lru_cache(maxsize=4096)
def parse_pattern(name: str) -> NamePattern:
    """Parse a binding resource name; raises :class:`InvalidName`."""
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidName("resource name is too long")
    literal, tail_src = name, None
    if name.endswith(">") and "<" in name:
        literal, _, rest = name.partition("<")
        tail_src = rest[:-1]
    if not literal.startswith(f"crn:{SERVICE_WORD}:organizations:"):
        raise InvalidName(f"resource name must start with crn:{SERVICE_WORD}:organizations:")
    if "<" in literal or ">" in literal:
        raise InvalidName("a regex tail must be the last part of the name, written <...>")
    parts = literal.split(":")
    if len(parts) < 4 or not parts[3]:
        raise InvalidName("resource name must contain the organization id")
    tail: re.Pattern[str] | None = None
    if tail_src is not None:
        if not tail_src or len(tail_src) > MAX_TAIL_LENGTH:
            raise InvalidName(f"regex tail must be 1 to {MAX_TAIL_LENGTH} characters")
        if not _TAIL_ALLOWED.match(tail_src) or _REPEATED_GROUP.search(tail_src):
            raise InvalidName("regex tail uses constructs that are not allowed")
        try:
            tail = re.compile(tail_src.removeprefix("^").removesuffix("$"))
        except re.error as exc:
            raise InvalidName(f"regex tail does not compile: {exc}") from exc
    return NamePattern(literal=literal, tail=tail)


def organization_of(name: str) -> str:
    """The organization id a (literal) resource name lives in."""
    parts = name.split(":")
    return parts[3].split("<", 1)[0] if len(parts) >= 4 else ""


@dataclass(frozen=True, slots=True)
class Role:
    id: str
    name: str
    description: str
    permissions: tuple[str, ...]
    system: bool = False

    def grants(self, permission: str) -> bool:
        return any(permission_covers(p, permission) for p in self.permissions)


def _all(action_filter: tuple[str, ...] | None = None) -> tuple[str, ...]:
    if action_filter is None:
        return tuple(f"{p}:*" for p in RESOURCE_PREFIXES)
    return tuple(f"{p}:{a}" for p in RESOURCE_PREFIXES for a in action_filter)


SYSTEM_ROLES: dict[str, Role] = {
    r.id: r
    for r in (
        Role("owner", "Owner", "Everything in the organization, incident fullaccess included.", _all(), True),
        Role("viewer", "Viewer", "Every get and list.", _all(("get", "list")), True),
        Role(
            "workflow_publisher",
            "Workflow publisher",
            "Publish events to workflow topics.",
            ("organization.workflow_topic:get", "organization.workflow_topic:publish"),
            True,
        ),
        Role(
            "incident_responder",
            "Incident responder",
            "Read and update incidents.",
            tuple(f"organization.incident:{a}" for a in ("get", "list", "update")),
            True,
        ),
        Role("incident_manager", "Incident manager", "Every incident action.", ("organization.incident:*",), True),
        Role(
            "user_manager",
            "User manager",
            "Manage users and groups.",
            ("organization.user:*", "organization.group:*"),
            True,
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Binding:
    """A role granted to a principal on a resource name (pattern)."""

    resource: str
    role_id: str


@dataclass(frozen=True, slots=True)
class Grant:
    binding: Binding
    role_id: str


def evaluate(
    bindings: tuple[Binding, ...] | list[Binding],
    roles: dict[str, Role],
    permission: str,
    resource: str,
) -> Grant | None:
    """The first binding whose pattern covers ``resource`` and whose role grants ``permission``."""
    for binding in bindings:
        role = roles.get(binding.role_id)
        if role is None or not role.grants(permission):
            continue
        try:
            pattern = parse_pattern(binding.resource)
        except InvalidName:
            continue
        if pattern.matches(resource):
            return Grant(binding=binding, role_id=role.id)
    return None
