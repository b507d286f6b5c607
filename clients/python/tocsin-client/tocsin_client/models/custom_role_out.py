from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.policy_out import PolicyOut


T = TypeVar("T", bound="CustomRoleOut")


@_attrs_define
class CustomRoleOut:
    """
    Attributes:
        created_at (datetime.datetime):
        description (str):
        id (str):
        name (str):
        organization_id (str):
        policies (list[PolicyOut]):
        system (bool):
    """

    created_at: datetime.datetime
    description: str
    id: str
    name: str
    organization_id: str
    policies: list[PolicyOut]
    system: bool

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        description = self.description

        id = self.id

        name = self.name

        organization_id = self.organization_id

        policies = []
        for policies_item_data in self.policies:
            policies_item = policies_item_data.to_dict()
            policies.append(policies_item)

        system = self.system

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "description": description,
                "id": id,
                "name": name,
                "organization_id": organization_id,
                "policies": policies,
                "system": system,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.policy_out import PolicyOut

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        description = d.pop("description")

        id = d.pop("id")

        name = d.pop("name")

        organization_id = d.pop("organization_id")

        policies = []
        _policies = d.pop("policies")
        for policies_item_data in _policies:
            policies_item = PolicyOut.from_dict(policies_item_data)

            policies.append(policies_item)

        system = d.pop("system")

        custom_role_out = cls(
            created_at=created_at,
            description=description,
            id=id,
            name=name,
            organization_id=organization_id,
            policies=policies,
            system=system,
        )

        return custom_role_out
