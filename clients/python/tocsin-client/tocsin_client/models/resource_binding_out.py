from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ResourceBindingOut")


@_attrs_define
class ResourceBindingOut:
    """
    Attributes:
        resource (str):
        role_id (str):
    """

    resource: str
    role_id: str

    def to_dict(self) -> dict[str, Any]:
        resource = self.resource

        role_id = self.role_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "resource": resource,
                "role_id": role_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        resource = d.pop("resource")

        role_id = d.pop("role_id")

        resource_binding_out = cls(
            resource=resource,
            role_id=role_id,
        )

        return resource_binding_out
