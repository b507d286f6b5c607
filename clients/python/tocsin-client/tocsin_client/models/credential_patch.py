from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.credential_patch_status import CredentialPatchStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="CredentialPatch")


@_attrs_define
class CredentialPatch:
    """
    Attributes:
        attribute_condition (None | str | Unset):
        audience (Any | Unset):
        display_name (str | Unset):
        issuer_url (Any | Unset):
        status (CredentialPatchStatus | Unset):
        subject_filter (Any | Unset):
    """

    attribute_condition: None | str | Unset = UNSET
    audience: Any | Unset = UNSET
    display_name: str | Unset = UNSET
    issuer_url: Any | Unset = UNSET
    status: CredentialPatchStatus | Unset = UNSET
    subject_filter: Any | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        attribute_condition: None | str | Unset
        if isinstance(self.attribute_condition, Unset):
            attribute_condition = UNSET
        else:
            attribute_condition = self.attribute_condition

        audience = self.audience

        display_name = self.display_name

        issuer_url = self.issuer_url

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        subject_filter = self.subject_filter

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if attribute_condition is not UNSET:
            field_dict["attribute_condition"] = attribute_condition
        if audience is not UNSET:
            field_dict["audience"] = audience
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if issuer_url is not UNSET:
            field_dict["issuer_url"] = issuer_url
        if status is not UNSET:
            field_dict["status"] = status
        if subject_filter is not UNSET:
            field_dict["subject_filter"] = subject_filter

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_attribute_condition(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        attribute_condition = _parse_attribute_condition(
            d.pop("attribute_condition", UNSET)
        )

        audience = d.pop("audience", UNSET)

        display_name = d.pop("display_name", UNSET)

        issuer_url = d.pop("issuer_url", UNSET)

        _status = d.pop("status", UNSET)
        status: CredentialPatchStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = CredentialPatchStatus(_status)

        subject_filter = d.pop("subject_filter", UNSET)

        credential_patch = cls(
            attribute_condition=attribute_condition,
            audience=audience,
            display_name=display_name,
            issuer_url=issuer_url,
            status=status,
            subject_filter=subject_filter,
        )

        return credential_patch
