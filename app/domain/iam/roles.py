"""Roles: named lists of permissions, and the system roles every organization has — pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.domain.iam.permissions import RESOURCE_PREFIXES, covers_concrete, is_concrete_permission


@dataclass(frozen=True, slots=True)
class Role:
    """A named list of permissions (``x:*`` allowed); system roles cannot change."""

    id: str
    name: str
    description: str
    permissions: tuple[str, ...]
    system: bool = False
    # The owner's: every permission the spec's pattern allows, also resources no route names yet
    # (the spec's ``organization.asset_item``), so an owner can build every role the spec describes.
    every_permission: bool = False

    def grants(self, permission: str) -> bool:
        """Whether one of the role's permissions covers the concrete ``permission``."""
        return is_concrete_permission(permission) and (
            self.every_permission or any(covers_concrete(p, permission) for p in self.permissions)
        )


def _of(prefixes: Iterable[str], *actions: str) -> tuple[str, ...]:
    return tuple(f"{p}:{a}" for p in prefixes for a in actions)


_INCIDENT, _TOPIC = ("organization.incident",), ("organization.workflow_topic",)


def _system(role_id: str, description: str, permissions: tuple[str, ...], *, every: bool = False) -> Role:
    name = role_id.replace("_", " ").capitalize()
    return Role(role_id, name, description, permissions, system=True, every_permission=every)


SYSTEM_ROLES: dict[str, Role] = {
    r.id: r
    for r in (
        _system(
            "owner",
            "Every permission in the organization (any service.resource:action), incident fullaccess included.",
            _of(RESOURCE_PREFIXES, "*"),
            every=True,
        ),
        _system("viewer", "Every get and list.", _of(RESOURCE_PREFIXES, "get", "list")),
        _system(
            "workflow_publisher",
            "Publish events to workflow topics, and read the traces of those topics' events.",
            # event:get on a topic's names reads the traces of its events (docs/api.md, "A publisher
            # reads its events' traces"): a publisher bound to one topic follows what it published
            (*_of(_TOPIC, "get", "publish"), "organization.event:get"),
        ),
        _system("incident_responder", "Read and update incidents.", _of(_INCIDENT, "get", "list", "update")),
        _system("incident_manager", "Every incident action.", _of(_INCIDENT, "*")),
        _system("user_manager", "Manage users and groups.", _of(("organization.user", "organization.group"), "*")),
    )
}
