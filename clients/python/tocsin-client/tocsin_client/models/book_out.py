from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="BookOut")


@_attrs_define
class BookOut:
    """
    Attributes:
        created_at (datetime.datetime):
        id (str):
        incident_title_template (str):
        member_group_ids (list[str]):
        member_user_ids (list[str]):
        name (str):
        organization_id (str):
    """

    created_at: datetime.datetime
    id: str
    incident_title_template: str
    member_group_ids: list[str]
    member_user_ids: list[str]
    name: str
    organization_id: str

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        id = self.id

        incident_title_template = self.incident_title_template

        member_group_ids = self.member_group_ids

        member_user_ids = self.member_user_ids

        name = self.name

        organization_id = self.organization_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "incident_title_template": incident_title_template,
                "member_group_ids": member_group_ids,
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

        incident_title_template = d.pop("incident_title_template")

        member_group_ids = cast(list[str], d.pop("member_group_ids"))

        member_user_ids = cast(list[str], d.pop("member_user_ids"))

        name = d.pop("name")

        organization_id = d.pop("organization_id")

        book_out = cls(
            created_at=created_at,
            id=id,
            incident_title_template=incident_title_template,
            member_group_ids=member_group_ids,
            member_user_ids=member_user_ids,
            name=name,
            organization_id=organization_id,
        )

        return book_out
