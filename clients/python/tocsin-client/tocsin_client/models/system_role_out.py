from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.policy_out import PolicyOut


T = TypeVar("T", bound="SystemRoleOut")


@_attrs_define
class SystemRoleOut:
    """
    Attributes:
        description (str):
        id (str):
        name (str):
        policies (list[PolicyOut]):
        system (bool):
    """

    description: str
    id: str
    name: str
    policies: list[PolicyOut]
    system: bool

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        id = self.id

        name = self.name

        policies = []
        for policies_item_data in self.policies:
            policies_item = policies_item_data.to_dict()
            policies.append(policies_item)

        system = self.system

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "description": description,
                "id": id,
                "name": name,
                "policies": policies,
                "system": system,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.policy_out import PolicyOut

        d = dict(src_dict)
        description = d.pop("description")

        id = d.pop("id")

        name = d.pop("name")

        policies = []
        _policies = d.pop("policies")
        for policies_item_data in _policies:
            policies_item = PolicyOut.from_dict(policies_item_data)

            policies.append(policies_item)

        system = d.pop("system")

        system_role_out = cls(
            description=description,
            id=id,
            name=name,
            policies=policies,
            system=system,
        )

        return system_role_out
