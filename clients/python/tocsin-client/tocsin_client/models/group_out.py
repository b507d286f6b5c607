from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="GroupOut")


@_attrs_define
class GroupOut:
    """
    Attributes:
        created_at (datetime.datetime):
        id (str):
        member_user_ids (list[str]):
        name (str):
        organization_id (str):
    """

    created_at: datetime.datetime
    id: str
    member_user_ids: list[str]
    name: str
    organization_id: str

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        id = self.id

        member_user_ids = self.member_user_ids

        name = self.name

        organization_id = self.organization_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "member_user_ids": member_user_ids,
                "name": name,
                "organization_id": organization_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        id = d.pop("id")

        member_user_ids = cast(list[str], d.pop("member_user_ids"))

        name = d.pop("name")

        organization_id = d.pop("organization_id")

        group_out = cls(
            created_at=created_at,
            id=id,
            member_user_ids=member_user_ids,
            name=name,
            organization_id=organization_id,
        )

        return group_out
