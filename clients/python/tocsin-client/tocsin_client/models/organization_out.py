from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="OrganizationOut")


@_attrs_define
class OrganizationOut:
    """
    Attributes:
        created_at (datetime.datetime):
        id (str):
        license_subscriber_organization_ids (list[str]):
        name (str):
        parent_organization_id (None | str):
        partner_organization_ids (list[str]):
    """

    created_at: datetime.datetime
    id: str
    license_subscriber_organization_ids: list[str]
    name: str
    parent_organization_id: None | str
    partner_organization_ids: list[str]

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        id = self.id

        license_subscriber_organization_ids = self.license_subscriber_organization_ids

        name = self.name

        parent_organization_id: None | str
        parent_organization_id = self.parent_organization_id

        partner_organization_ids = self.partner_organization_ids

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "license_subscriber_organization_ids": license_subscriber_organization_ids,
                "name": name,
                "parent_organization_id": parent_organization_id,
                "partner_organization_ids": partner_organization_ids,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        id = d.pop("id")

        license_subscriber_organization_ids = cast(
            list[str], d.pop("license_subscriber_organization_ids")
        )

        name = d.pop("name")

        def _parse_parent_organization_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        parent_organization_id = _parse_parent_organization_id(
            d.pop("parent_organization_id")
        )

        partner_organization_ids = cast(list[str], d.pop("partner_organization_ids"))

        organization_out = cls(
            created_at=created_at,
            id=id,
            license_subscriber_organization_ids=license_subscriber_organization_ids,
            name=name,
            parent_organization_id=parent_organization_id,
            partner_organization_ids=partner_organization_ids,
        )

        return organization_out
