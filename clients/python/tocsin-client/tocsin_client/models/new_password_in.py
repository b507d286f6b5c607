from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="NewPasswordIn")


@_attrs_define
class NewPasswordIn:
    """
    Attributes:
        new_password (str):
        token (str):
    """

    new_password: str
    token: str

    def to_dict(self) -> dict[str, Any]:
        new_password = self.new_password

        token = self.token

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "new_password": new_password,
                "token": token,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        new_password = d.pop("new_password")

        token = d.pop("token")

        new_password_in = cls(
            new_password=new_password,
            token=token,
        )

        return new_password_in
