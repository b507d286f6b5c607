from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.service_account_in_status import ServiceAccountInStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="ServiceAccountIn")


@_attrs_define
class ServiceAccountIn:
    """
    Attributes:
        name (str):
        description (str | Unset):  Default: ''.
        status (ServiceAccountInStatus | Unset):  Default: ServiceAccountInStatus.ACTIVE.
    """

    name: str
    description: str | Unset = ""
    status: ServiceAccountInStatus | Unset = ServiceAccountInStatus.ACTIVE

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        description = self.description

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        description = d.pop("description", UNSET)

        _status = d.pop("status", UNSET)
        status: ServiceAccountInStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = ServiceAccountInStatus(_status)

        service_account_in = cls(
            name=name,
            description=description,
            status=status,
        )

        return service_account_in
