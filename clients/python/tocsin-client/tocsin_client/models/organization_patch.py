from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="OrganizationPatch")


@_attrs_define
class OrganizationPatch:
    """
    Attributes:
        license_subscriber_organization_ids (list[str] | Unset):
        parent_organization_id (None | str | Unset):
        partner_organization_ids (list[str] | Unset):
    """

    license_subscriber_organization_ids: list[str] | Unset = UNSET
    parent_organization_id: None | str | Unset = UNSET
    partner_organization_ids: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        license_subscriber_organization_ids: list[str] | Unset = UNSET
        if not isinstance(self.license_subscriber_organization_ids, Unset):
            license_subscriber_organization_ids = (
                self.license_subscriber_organization_ids
            )

        parent_organization_id: None | str | Unset
        if isinstance(self.parent_organization_id, Unset):
            parent_organization_id = UNSET
        else:
            parent_organization_id = self.parent_organization_id

        partner_organization_ids: list[str] | Unset = UNSET
        if not isinstance(self.partner_organization_ids, Unset):
            partner_organization_ids = self.partner_organization_ids

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if license_subscriber_organization_ids is not UNSET:
            field_dict["license_subscriber_organization_ids"] = (
                license_subscriber_organization_ids
            )
        if parent_organization_id is not UNSET:
            field_dict["parent_organization_id"] = parent_organization_id
        if partner_organization_ids is not UNSET:
            field_dict["partner_organization_ids"] = partner_organization_ids

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        license_subscriber_organization_ids = cast(
            list[str], d.pop("license_subscriber_organization_ids", UNSET)
        )

        def _parse_parent_organization_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        parent_organization_id = _parse_parent_organization_id(
            d.pop("parent_organization_id", UNSET)
        )

        partner_organization_ids = cast(
            list[str], d.pop("partner_organization_ids", UNSET)
        )

        organization_patch = cls(
            license_subscriber_organization_ids=license_subscriber_organization_ids,
            parent_organization_id=parent_organization_id,
            partner_organization_ids=partner_organization_ids,
        )

        return organization_patch
