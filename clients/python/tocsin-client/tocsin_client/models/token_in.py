from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="TokenIn")


@_attrs_define
class TokenIn:
    """
    Attributes:
        expires_in (int | None | Unset):
        name (str | Unset):  Default: ''.
    """

    expires_in: int | None | Unset = UNSET
    name: str | Unset = ""

    def to_dict(self) -> dict[str, Any]:
        expires_in: int | None | Unset
        if isinstance(self.expires_in, Unset):
            expires_in = UNSET
        else:
            expires_in = self.expires_in

        name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if expires_in is not UNSET:
            field_dict["expires_in"] = expires_in
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_expires_in(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expires_in = _parse_expires_in(d.pop("expires_in", UNSET))

        name = d.pop("name", UNSET)

        token_in = cls(
            expires_in=expires_in,
            name=name,
        )

        return token_in
