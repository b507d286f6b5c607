from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ActorOut")


@_attrs_define
class ActorOut:
    """
    Attributes:
        id (str):
        kind (str):
    """

    id: str
    kind: str

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "kind": kind,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        kind = d.pop("kind")

        actor_out = cls(
            id=id,
            kind=kind,
        )

        return actor_out
