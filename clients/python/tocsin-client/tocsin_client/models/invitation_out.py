from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="InvitationOut")


@_attrs_define
class InvitationOut:
    """
    Attributes:
        expires_at (datetime.datetime):
        token (str):
        url (str):
    """

    expires_at: datetime.datetime
    token: str
    url: str

    def to_dict(self) -> dict[str, Any]:
        expires_at = self.expires_at.isoformat()

        token = self.token

        url = self.url

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "expires_at": expires_at,
                "token": token,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        token = d.pop("token")

        url = d.pop("url")

        invitation_out = cls(
            expires_at=expires_at,
            token=token,
            url=url,
        )

        return invitation_out
