from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.incident_patch_status import IncidentPatchStatus

T = TypeVar("T", bound="IncidentPatch")


@_attrs_define
class IncidentPatch:
    """
    Attributes:
        status (IncidentPatchStatus):
    """

    status: IncidentPatchStatus

    def to_dict(self) -> dict[str, Any]:
        status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        status = IncidentPatchStatus(d.pop("status"))

        incident_patch = cls(
            status=status,
        )

        return incident_patch
