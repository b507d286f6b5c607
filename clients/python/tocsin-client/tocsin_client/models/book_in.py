from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="BookIn")


@_attrs_define
class BookIn:
    """
    Attributes:
        incident_title_template (str):
        name (str):
        member_group_ids (list[str] | Unset):
        member_user_ids (list[str] | Unset):
    """

    incident_title_template: str
    name: str
    member_group_ids: list[str] | Unset = UNSET
    member_user_ids: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        incident_title_template = self.incident_title_template

        name = self.name

        member_group_ids: list[str] | Unset = UNSET
        if not isinstance(self.member_group_ids, Unset):
            member_group_ids = self.member_group_ids

        member_user_ids: list[str] | Unset = UNSET
        if not isinstance(self.member_user_ids, Unset):
            member_user_ids = self.member_user_ids

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "incident_title_template": incident_title_template,
                "name": name,
            }
        )
        if member_group_ids is not UNSET:
            field_dict["member_group_ids"] = member_group_ids
        if member_user_ids is not UNSET:
            field_dict["member_user_ids"] = member_user_ids

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        incident_title_template = d.pop("incident_title_template")

        name = d.pop("name")

        member_group_ids = cast(list[str], d.pop("member_group_ids", UNSET))

        member_user_ids = cast(list[str], d.pop("member_user_ids", UNSET))

        book_in = cls(
            incident_title_template=incident_title_template,
            name=name,
            member_group_ids=member_group_ids,
            member_user_ids=member_user_ids,
        )

        return book_in
