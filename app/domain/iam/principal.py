"""The authenticated caller and the questions the API asks about it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.domain.iam.binding_index import BindingIndex
from app.domain.iam.evaluation import Binding, Grant
from app.domain.iam.roles import SYSTEM_ROLES, Role


@dataclass(frozen=True, slots=True)
class Principal:
    """An account behind a token, with everything the IAM decision needs (no I/O)."""

    account_id: str
    organization_id: str
    kind: str  # "service_account" | "user_account"
    platform_owner: bool
    token_id: str
    bindings: tuple[Binding, ...]
    roles: Mapping[str, Role] = field(default_factory=lambda: SYSTEM_ROLES)
    group_ids: frozenset[str] = frozenset()
    incident_ids: frozenset[str] = frozenset()  # incidents whose bindings name this account or its groups
    _index: BindingIndex | None = field(default=None, compare=False, repr=False)

    def grant(self, permission: str, resource: str) -> Grant | None:
        """The binding and role that give ``permission`` on ``resource``, or None."""
        index = self._index
        if index is None:  # compiled once per principal (principals are cached per token)
            index = BindingIndex(self.bindings, self.roles)
            object.__setattr__(self, "_index", index)
        return index.grant(permission, resource)

    def can(self, permission: str, resource: str) -> bool:
        return self.grant(permission, resource) is not None

    def holds_anywhere(self, permission: str) -> bool:
        """Whether one of the principal's bindings grants ``permission`` on some name: a caller that
        may read some topic's event traces (``organization.event:get`` on the topic) gets ``404`` for
        an event it may not read, the answer for one that does not exist; any other caller ``403``."""
        return any(
            (role := self.roles.get(binding.role_id)) is not None and role.grants(permission)
            for binding in self.bindings
        )

    def is_member(self, user_ids: list[str] | tuple[str, ...], group_ids: list[str] | tuple[str, ...]) -> bool:
        """Member directly or through one of its groups."""
        return self.account_id in user_ids or not self.group_ids.isdisjoint(group_ids)

    def sees_incident(self, incident_id: str, user_ids: list[str], group_ids: list[str]) -> bool:
        """Without ``incident:fullaccess`` only incidents one is a member of are visible."""
        return incident_id in self.incident_ids or self.is_member(user_ids, group_ids)
