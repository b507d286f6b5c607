from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="RefreshedOut")


@_attrs_define
class RefreshedOut:
    """
    Attributes:
        access_token (str):
        expires_in (int):
        token_type (Literal['Bearer']):
    """

    access_token: str
    expires_in: int
    token_type: Literal["Bearer"]

    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        expires_in = self.expires_in

        token_type = self.token_type

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "access_token": access_token,
                "expires_in": expires_in,
                "token_type": token_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        access_token = d.pop("access_token")

        expires_in = d.pop("expires_in")

        token_type = cast(Literal["Bearer"], d.pop("token_type"))
        if token_type != "Bearer":
            raise ValueError(
                f"token_type must match const 'Bearer', got '{token_type}'"
            )

        refreshed_out = cls(
            access_token=access_token,
            expires_in=expires_in,
            token_type=token_type,
        )

        return refreshed_out
