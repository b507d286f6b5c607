"""A principal's bindings compiled once: indexed by organization and resource type, with each
role's permissions as sets, so a decision looks only at the few bindings that can match a name
and checks a permission in O(1). :meth:`BindingIndex.grant` answers exactly as :func:`evaluate`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from app.domain.iam.evaluation import Binding, Grant
from app.domain.iam.permissions import is_valid_permission
from app.domain.iam.resource_names import InvalidName, NamePattern, parse_pattern
from app.domain.iam.roles import Role

_ANY = ""  # bucket of bindings whose literal part does not fix a resource type


class _Compiled(NamedTuple):
    position: int
    binding: Binding
    pattern: NamePattern
    role_id: str
    concrete: frozenset[str]
    wildcards: frozenset[str]  # "x" for each "x:*"
    everything: bool  # the role grants every permission (the owner)


def _bucket(name: str) -> tuple[str, str]:
    """(organization, type) that a name's literal part fixes; type ``_ANY`` when not complete."""
    parts = name.split(":", 4)
    org = parts[3] if len(parts) > 3 else _ANY
    if len(parts) < 5:
        return org, _ANY
    kind, slash, _rest = parts[4].partition("/")
    return org, kind if slash else _ANY


class BindingIndex:
    __slots__ = ("_buckets",)

    def __init__(self, bindings: Sequence[Binding], roles: Mapping[str, Role]) -> None:
        buckets: dict[tuple[str, str], list[_Compiled]] = {}
        for position, binding in enumerate(bindings):
            role = roles.get(binding.role_id)
            try:
                pattern = parse_pattern(binding.resource)
            except InvalidName:
                continue  # evaluate() skips invalid names too
            org, kind = _bucket(pattern.literal)
            if role is None or org == _ANY:
                continue
            concrete = frozenset(p for p in role.permissions if not p.endswith(":*"))
            wildcards = frozenset(p[:-2] for p in role.permissions if p.endswith(":*"))
            buckets.setdefault((org, kind), []).append(
                _Compiled(position, binding, pattern, role.id, concrete, wildcards, role.every_permission)
            )
        self._buckets = {key: tuple(entries) for key, entries in buckets.items()}

    def grant(self, permission: str, resource: str) -> Grant | None:
        org, kind = _bucket(resource)
        if kind == _ANY and resource.count(":") >= 4:
            kind = resource.split(":", 4)[4]  # a collection name such as "…:incidents"
        exact = self._buckets.get((org, kind), ())
        broad = self._buckets.get((org, _ANY), ())
        if not exact and not broad:
            return None
        if not is_valid_permission(permission):
            return None
        prefix = permission.rpartition(":")[0]
        candidates = sorted((*exact, *broad)) if exact and broad else (exact or broad)
        for entry in candidates:
            granted = entry.everything or permission in entry.concrete or prefix in entry.wildcards
            if granted and entry.pattern.matches(resource):
                return Grant(binding=entry.binding, role_id=entry.role_id)
        return None
