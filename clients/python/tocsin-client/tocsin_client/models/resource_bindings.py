from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.resource_binding import ResourceBinding


T = TypeVar("T", bound="ResourceBindings")


@_attrs_define
class ResourceBindings:
    """
    Attributes:
        bindings (list[ResourceBinding]):
    """

    bindings: list[ResourceBinding]

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
        from ..models.resource_binding import ResourceBinding

        d = dict(src_dict)
        bindings = []
        _bindings = d.pop("bindings")
        for bindings_item_data in _bindings:
            bindings_item = ResourceBinding.from_dict(bindings_item_data)

            bindings.append(bindings_item)

        resource_bindings = cls(
            bindings=bindings,
        )

        return resource_bindings
