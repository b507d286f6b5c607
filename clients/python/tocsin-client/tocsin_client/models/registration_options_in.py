from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RegistrationOptionsIn")


@_attrs_define
class RegistrationOptionsIn:
    """
    Attributes:
        challenge (None | str | Unset): an enrolment step's challenge; without it, the caller's session
    """

    challenge: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        challenge: None | str | Unset
        if isinstance(self.challenge, Unset):
            challenge = UNSET
        else:
            challenge = self.challenge

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if challenge is not UNSET:
            field_dict["challenge"] = challenge

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_challenge(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        challenge = _parse_challenge(d.pop("challenge", UNSET))

        registration_options_in = cls(
            challenge=challenge,
        )

        return registration_options_in
