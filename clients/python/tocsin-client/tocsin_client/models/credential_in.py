from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.credential_in_status import CredentialInStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="CredentialIn")


@_attrs_define
class CredentialIn:
    """
    Attributes:
        display_name (str):
        issuer_url (str):
        subject_filter (str):
        attribute_condition (None | str | Unset):
        audience (None | str | Unset):
        status (CredentialInStatus | Unset):  Default: CredentialInStatus.ACTIVE.
    """

    display_name: str
    issuer_url: str
    subject_filter: str
    attribute_condition: None | str | Unset = UNSET
    audience: None | str | Unset = UNSET
    status: CredentialInStatus | Unset = CredentialInStatus.ACTIVE

    def to_dict(self) -> dict[str, Any]:
        display_name = self.display_name

        issuer_url = self.issuer_url

        subject_filter = self.subject_filter

        attribute_condition: None | str | Unset
        if isinstance(self.attribute_condition, Unset):
            attribute_condition = UNSET
        else:
            attribute_condition = self.attribute_condition

        audience: None | str | Unset
        if isinstance(self.audience, Unset):
            audience = UNSET
        else:
            audience = self.audience

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "display_name": display_name,
                "issuer_url": issuer_url,
                "subject_filter": subject_filter,
            }
        )
        if attribute_condition is not UNSET:
            field_dict["attribute_condition"] = attribute_condition
        if audience is not UNSET:
            field_dict["audience"] = audience
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        display_name = d.pop("display_name")

        issuer_url = d.pop("issuer_url")

        subject_filter = d.pop("subject_filter")

        def _parse_attribute_condition(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        attribute_condition = _parse_attribute_condition(
            d.pop("attribute_condition", UNSET)
        )

        def _parse_audience(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        audience = _parse_audience(d.pop("audience", UNSET))

        _status = d.pop("status", UNSET)
        status: CredentialInStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = CredentialInStatus(_status)

        credential_in = cls(
            display_name=display_name,
            issuer_url=issuer_url,
            subject_filter=subject_filter,
            attribute_condition=attribute_condition,
            audience=audience,
            status=status,
        )

        return credential_in
