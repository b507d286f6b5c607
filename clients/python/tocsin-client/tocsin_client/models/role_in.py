from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.policy import Policy


T = TypeVar("T", bound="RoleIn")


@_attrs_define
class RoleIn:
    """
    Attributes:
        name (str):
        policies (list[Policy]):
        description (str | Unset):  Default: ''.
    """

    name: str
    policies: list[Policy]
    description: str | Unset = ""

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        policies = []
        for policies_item_data in self.policies:
            policies_item = policies_item_data.to_dict()
            policies.append(policies_item)

        description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "policies": policies,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.policy import Policy

        d = dict(src_dict)
        name = d.pop("name")

        policies = []
        _policies = d.pop("policies")
        for policies_item_data in _policies:
            policies_item = Policy.from_dict(policies_item_data)

            policies.append(policies_item)

        description = d.pop("description", UNSET)

        role_in = cls(
            name=name,
            policies=policies,
            description=description,
        )

        return role_in
