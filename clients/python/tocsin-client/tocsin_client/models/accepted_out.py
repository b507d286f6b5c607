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

T = TypeVar("T", bound="AcceptedOut")


@_attrs_define
class AcceptedOut:
    """
    Attributes:
        status (Literal['accepted']):
    """

    status: Literal["accepted"]

    def to_dict(self) -> dict[str, Any]:
        status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        status = cast(Literal["accepted"], d.pop("status"))
        if status != "accepted":
            raise ValueError(f"status must match const 'accepted', got '{status}'")

        accepted_out = cls(
            status=status,
        )

        return accepted_out
