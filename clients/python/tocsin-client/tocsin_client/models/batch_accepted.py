from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="BatchAccepted")


@_attrs_define
class BatchAccepted:
    """
    Attributes:
        ids (list[str]): the server's event ids, in the order of the batch's publish requests
    """

    ids: list[str]

    def to_dict(self) -> dict[str, Any]:
        ids = self.ids

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "ids": ids,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        ids = cast(list[str], d.pop("ids"))

        batch_accepted = cls(
            ids=ids,
        )

        return batch_accepted
