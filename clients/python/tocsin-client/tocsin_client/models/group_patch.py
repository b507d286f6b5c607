from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="GroupPatch")


@_attrs_define
class GroupPatch:
    """
    Attributes:
        member_user_ids (list[str] | Unset):
        name (str | Unset):
    """

    member_user_ids: list[str] | Unset = UNSET
    name: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        member_user_ids: list[str] | Unset = UNSET
        if not isinstance(self.member_user_ids, Unset):
            member_user_ids = self.member_user_ids

        name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if member_user_ids is not UNSET:
            field_dict["member_user_ids"] = member_user_ids
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        member_user_ids = cast(list[str], d.pop("member_user_ids", UNSET))

        name = d.pop("name", UNSET)

        group_patch = cls(
            member_user_ids=member_user_ids,
            name=name,
        )

        return group_patch
