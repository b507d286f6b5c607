from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="AddressIn")


@_attrs_define
class AddressIn:
    """
    Attributes:
        email (str):
        organization_id (str):
    """

    email: str
    organization_id: str

    def to_dict(self) -> dict[str, Any]:
        email = self.email

        organization_id = self.organization_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "email": email,
                "organization_id": organization_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        email = d.pop("email")

        organization_id = d.pop("organization_id")

        address_in = cls(
            email=email,
            organization_id=organization_id,
        )

        return address_in
