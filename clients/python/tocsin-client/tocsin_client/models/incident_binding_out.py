from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="IncidentBindingOut")


@_attrs_define
class IncidentBindingOut:
    """
    Attributes:
        group_ids (list[str]):
        role_id (str):
        user_ids (list[str]):
    """

    group_ids: list[str]
    role_id: str
    user_ids: list[str]

    def to_dict(self) -> dict[str, Any]:
        group_ids = self.group_ids

        role_id = self.role_id

        user_ids = self.user_ids

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "group_ids": group_ids,
                "role_id": role_id,
                "user_ids": user_ids,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        group_ids = cast(list[str], d.pop("group_ids"))

        role_id = d.pop("role_id")

        user_ids = cast(list[str], d.pop("user_ids"))

        incident_binding_out = cls(
            group_ids=group_ids,
            role_id=role_id,
            user_ids=user_ids,
        )

        return incident_binding_out
