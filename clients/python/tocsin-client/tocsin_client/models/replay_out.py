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

T = TypeVar("T", bound="ReplayOut")


@_attrs_define
class ReplayOut:
    """
    Attributes:
        id (str):
        replay (int):
        status (Literal['PENDING']):
    """

    id: str
    replay: int
    status: Literal["PENDING"]

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        replay = self.replay

        status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "replay": replay,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        replay = d.pop("replay")

        status = cast(Literal["PENDING"], d.pop("status"))
        if status != "PENDING":
            raise ValueError(f"status must match const 'PENDING', got '{status}'")

        replay_out = cls(
            id=id,
            replay=replay,
            status=status,
        )

        return replay_out
