from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.resource_binding_out import ResourceBindingOut


T = TypeVar("T", bound="ResourceBindingsOut")


@_attrs_define
class ResourceBindingsOut:
    """
    Attributes:
        bindings (list[ResourceBindingOut]):
    """

    bindings: list[ResourceBindingOut]

    def to_dict(self) -> dict[str, Any]:
        bindings = []
        for bindings_item_data in self.bindings:
            bindings_item = bindings_item_data.to_dict()
            bindings.append(bindings_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "bindings": bindings,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.resource_binding_out import ResourceBindingOut

        d = dict(src_dict)
        bindings = []
        _bindings = d.pop("bindings")
        for bindings_item_data in _bindings:
            bindings_item = ResourceBindingOut.from_dict(bindings_item_data)

            bindings.append(bindings_item)

        resource_bindings_out = cls(
            bindings=bindings,
        )

        return resource_bindings_out
