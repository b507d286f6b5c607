from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="AssertionOptionsIn")


@_attrs_define
class AssertionOptionsIn:
    """
    Attributes:
        challenge (str):
    """

    challenge: str

    def to_dict(self) -> dict[str, Any]:
        challenge = self.challenge

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "challenge": challenge,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        challenge = d.pop("challenge")

        assertion_options_in = cls(
            challenge=challenge,
        )

        return assertion_options_in
