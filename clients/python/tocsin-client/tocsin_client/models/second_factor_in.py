from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.second_factor_in_method import SecondFactorInMethod

T = TypeVar("T", bound="SecondFactorIn")


@_attrs_define
class SecondFactorIn:
    """
    Attributes:
        challenge (str):
        code (str):
        method (SecondFactorInMethod):
    """

    challenge: str
    code: str
    method: SecondFactorInMethod

    def to_dict(self) -> dict[str, Any]:
        challenge = self.challenge

        code = self.code

        method = self.method.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "challenge": challenge,
                "code": code,
                "method": method,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        challenge = d.pop("challenge")

        code = d.pop("code")

        method = SecondFactorInMethod(d.pop("method"))

        second_factor_in = cls(
            challenge=challenge,
            code=code,
            method=method,
        )

        return second_factor_in
