from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="IncidentBinding")


@_attrs_define
class IncidentBinding:
    """
    Attributes:
        role_id (str):
        group_ids (list[str] | Unset):
        user_ids (list[str] | Unset):
    """

    role_id: str
    group_ids: list[str] | Unset = UNSET
    user_ids: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        role_id = self.role_id

        group_ids: list[str] | Unset = UNSET
        if not isinstance(self.group_ids, Unset):
            group_ids = self.group_ids

        user_ids: list[str] | Unset = UNSET
        if not isinstance(self.user_ids, Unset):
            user_ids = self.user_ids

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "role_id": role_id,
            }
        )
        if group_ids is not UNSET:
            field_dict["group_ids"] = group_ids
        if user_ids is not UNSET:
            field_dict["user_ids"] = user_ids

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        role_id = d.pop("role_id")

        group_ids = cast(list[str], d.pop("group_ids", UNSET))

        user_ids = cast(list[str], d.pop("user_ids", UNSET))

        incident_binding = cls(
            role_id=role_id,
            group_ids=group_ids,
            user_ids=user_ids,
        )

        return incident_binding
