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

T = TypeVar("T", bound="SendEmail")


@_attrs_define
class SendEmail:
    """
    Attributes:
        body (str):
        subject (str):
        to (list[str]):
        type_ (Literal['SEND_EMAIL']):
    """

    body: str
    subject: str
    to: list[str]
    type_: Literal["SEND_EMAIL"]

    def to_dict(self) -> dict[str, Any]:
        body = self.body

        subject = self.subject

        to = self.to

        type_ = self.type_

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "body": body,
                "subject": subject,
                "to": to,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        body = d.pop("body")

        subject = d.pop("subject")

        to = cast(list[str], d.pop("to"))

        type_ = cast(Literal["SEND_EMAIL"], d.pop("type"))
        if type_ != "SEND_EMAIL":
            raise ValueError(f"type must match const 'SEND_EMAIL', got '{type_}'")

        send_email = cls(
            body=body,
            subject=subject,
            to=to,
            type_=type_,
        )

        return send_email
