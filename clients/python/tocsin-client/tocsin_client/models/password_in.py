from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="PasswordIn")


@_attrs_define
class PasswordIn:
    """
    Attributes:
        email (str):
        organization_id (str):
        password (str):
        device_token (None | str | Unset): from an earlier sign-in (else the tocsin_device cookie)
    """

    email: str
    organization_id: str
    password: str
    device_token: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        email = self.email

        organization_id = self.organization_id

        password = self.password

        device_token: None | str | Unset
        if isinstance(self.device_token, Unset):
            device_token = UNSET
        else:
            device_token = self.device_token

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "email": email,
                "organization_id": organization_id,
                "password": password,
            }
        )
        if device_token is not UNSET:
            field_dict["device_token"] = device_token

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        email = d.pop("email")

        organization_id = d.pop("organization_id")

        password = d.pop("password")

        def _parse_device_token(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        device_token = _parse_device_token(d.pop("device_token", UNSET))

        password_in = cls(
            email=email,
            organization_id=organization_id,
            password=password,
            device_token=device_token,
        )

        return password_in
