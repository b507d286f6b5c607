from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.user_patch_status import UserPatchStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="UserPatch")


@_attrs_define
class UserPatch:
    """
    Attributes:
        display_name (str | Unset):
        status (UserPatchStatus | Unset):
    """

    display_name: str | Unset = UNSET
    status: UserPatchStatus | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        display_name = self.display_name

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        display_name = d.pop("display_name", UNSET)

        _status = d.pop("status", UNSET)
        status: UserPatchStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = UserPatchStatus(_status)

        user_patch = cls(
            display_name=display_name,
            status=status,
        )

        return user_patch
