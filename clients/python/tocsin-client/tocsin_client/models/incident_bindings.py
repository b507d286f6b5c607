from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.incident_binding import IncidentBinding


T = TypeVar("T", bound="IncidentBindings")


@_attrs_define
class IncidentBindings:
    """
    Attributes:
        bindings (list[IncidentBinding]):
    """

    bindings: list[IncidentBinding]

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
        from ..models.incident_binding import IncidentBinding

        d = dict(src_dict)
        bindings = []
        _bindings = d.pop("bindings")
        for bindings_item_data in _bindings:
            bindings_item = IncidentBinding.from_dict(bindings_item_data)

            bindings.append(bindings_item)

        incident_bindings = cls(
            bindings=bindings,
        )

        return incident_bindings
