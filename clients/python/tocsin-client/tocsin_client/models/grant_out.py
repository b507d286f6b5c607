from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.resource_binding_out import ResourceBindingOut


T = TypeVar("T", bound="GrantOut")


@_attrs_define
class GrantOut:
    """
    Attributes:
        binding (ResourceBindingOut):
        role_id (str):
    """

    binding: ResourceBindingOut
    role_id: str

    def to_dict(self) -> dict[str, Any]:
        binding = self.binding.to_dict()

        role_id = self.role_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "binding": binding,
                "role_id": role_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.resource_binding_out import ResourceBindingOut

        d = dict(src_dict)
        binding = ResourceBindingOut.from_dict(d.pop("binding"))

        role_id = d.pop("role_id")

        grant_out = cls(
            binding=binding,
            role_id=role_id,
        )

        return grant_out
