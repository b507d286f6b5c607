from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="GroupIn")


@_attrs_define
class GroupIn:
    """
    Attributes:
        name (str):
        member_user_ids (list[str] | Unset):
    """

    name: str
    member_user_ids: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        member_user_ids: list[str] | Unset = UNSET
        if not isinstance(self.member_user_ids, Unset):
            member_user_ids = self.member_user_ids

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if member_user_ids is not UNSET:
            field_dict["member_user_ids"] = member_user_ids

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        member_user_ids = cast(list[str], d.pop("member_user_ids", UNSET))

        group_in = cls(
            name=name,
            member_user_ids=member_user_ids,
        )

        return group_in
