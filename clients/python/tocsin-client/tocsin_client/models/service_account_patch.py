from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.service_account_patch_status import ServiceAccountPatchStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="ServiceAccountPatch")


@_attrs_define
class ServiceAccountPatch:
    """
    Attributes:
        description (str | Unset):
        name (str | Unset):
        status (ServiceAccountPatchStatus | Unset):
    """

    description: str | Unset = UNSET
    name: str | Unset = UNSET
    status: ServiceAccountPatchStatus | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        name = self.name

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if description is not UNSET:
            field_dict["description"] = description
        if name is not UNSET:
            field_dict["name"] = name
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        description = d.pop("description", UNSET)

        name = d.pop("name", UNSET)

        _status = d.pop("status", UNSET)
        status: ServiceAccountPatchStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = ServiceAccountPatchStatus(_status)

        service_account_patch = cls(
            description=description,
            name=name,
            status=status,
        )

        return service_account_patch
