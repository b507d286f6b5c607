from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="TotpConfirmIn")


@_attrs_define
class TotpConfirmIn:
    """
    Attributes:
        code (str):
        challenge (None | str | Unset): an enrolment step's challenge; without it, the caller's session
    """

    code: str
    challenge: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        challenge: None | str | Unset
        if isinstance(self.challenge, Unset):
            challenge = UNSET
        else:
            challenge = self.challenge

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "code": code,
            }
        )
        if challenge is not UNSET:
            field_dict["challenge"] = challenge

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        code = d.pop("code")

        def _parse_challenge(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        challenge = _parse_challenge(d.pop("challenge", UNSET))

        totp_confirm_in = cls(
            code=code,
            challenge=challenge,
        )

        return totp_confirm_in
