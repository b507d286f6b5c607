from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="OneTimeTokenIn")


@_attrs_define
class OneTimeTokenIn:
    """
    Attributes:
        token (str):
        device_token (None | str | Unset):
    """

    token: str
    device_token: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        token = self.token

        device_token: None | str | Unset
        if isinstance(self.device_token, Unset):
            device_token = UNSET
        else:
            device_token = self.device_token

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "token": token,
            }
        )
        if device_token is not UNSET:
            field_dict["device_token"] = device_token

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        token = d.pop("token")

        def _parse_device_token(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        device_token = _parse_device_token(d.pop("device_token", UNSET))

        one_time_token_in = cls(
            token=token,
            device_token=device_token,
        )

        return one_time_token_in
