from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.user_in_status import UserInStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="UserIn")


@_attrs_define
class UserIn:
    """
    Attributes:
        display_name (str):
        email (str):
        status (UserInStatus | Unset):  Default: UserInStatus.ACTIVE.
    """

    display_name: str
    email: str
    status: UserInStatus | Unset = UserInStatus.ACTIVE

    def to_dict(self) -> dict[str, Any]:
        display_name = self.display_name

        email = self.email

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "display_name": display_name,
                "email": email,
            }
        )
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        display_name = d.pop("display_name")

        email = d.pop("email")

        _status = d.pop("status", UNSET)
        status: UserInStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = UserInStatus(_status)

        user_in = cls(
            display_name=display_name,
            email=email,
            status=status,
        )

        return user_in
