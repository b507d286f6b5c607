from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.credential_out_status import CredentialOutStatus

T = TypeVar("T", bound="CredentialOut")


@_attrs_define
class CredentialOut:
    """
    Attributes:
        attribute_condition (None | str):
        audience (str):
        created_at (datetime.datetime):
        display_name (str):
        id (str):
        issuer_url (str):
        organization_id (str):
        service_account_id (str):
        status (CredentialOutStatus):
        subject_filter (str):
    """

    attribute_condition: None | str
    audience: str
    created_at: datetime.datetime
    display_name: str
    id: str
    issuer_url: str
    organization_id: str
    service_account_id: str
    status: CredentialOutStatus
    subject_filter: str

    def to_dict(self) -> dict[str, Any]:
        attribute_condition: None | str
        attribute_condition = self.attribute_condition

        audience = self.audience

        created_at = self.created_at.isoformat()

        display_name = self.display_name

        id = self.id

        issuer_url = self.issuer_url

        organization_id = self.organization_id

        service_account_id = self.service_account_id

        status = self.status.value

        subject_filter = self.subject_filter

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attribute_condition": attribute_condition,
                "audience": audience,
                "created_at": created_at,
                "display_name": display_name,
                "id": id,
                "issuer_url": issuer_url,
                "organization_id": organization_id,
                "service_account_id": service_account_id,
                "status": status,
                "subject_filter": subject_filter,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_attribute_condition(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        attribute_condition = _parse_attribute_condition(d.pop("attribute_condition"))

        audience = d.pop("audience")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        display_name = d.pop("display_name")

        id = d.pop("id")

        issuer_url = d.pop("issuer_url")

        organization_id = d.pop("organization_id")

        service_account_id = d.pop("service_account_id")

        status = CredentialOutStatus(d.pop("status"))

        subject_filter = d.pop("subject_filter")

        credential_out = cls(
            attribute_condition=attribute_condition,
            audience=audience,
            created_at=created_at,
            display_name=display_name,
            id=id,
            issuer_url=issuer_url,
            organization_id=organization_id,
            service_account_id=service_account_id,
            status=status,
            subject_filter=subject_filter,
        )

        return credential_out
