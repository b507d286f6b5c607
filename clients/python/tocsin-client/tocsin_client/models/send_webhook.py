from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SendWebhook")


@_attrs_define
class SendWebhook:
    """
    Attributes:
        type_ (Literal['SEND_WEBHOOK']):
        url (str):
        secret (None | str | Unset):
    """

    type_: Literal["SEND_WEBHOOK"]
    url: str
    secret: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        url = self.url

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
                "url": url,
            }
        )
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = cast(Literal["SEND_WEBHOOK"], d.pop("type"))
        if type_ != "SEND_WEBHOOK":
            raise ValueError(f"type must match const 'SEND_WEBHOOK', got '{type_}'")

        url = d.pop("url")

        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        send_webhook = cls(
            type_=type_,
            url=url,
            secret=secret,
        )

        return send_webhook
