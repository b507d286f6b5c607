from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="TotpEnrolmentOut")


@_attrs_define
class TotpEnrolmentOut:
    """
    Attributes:
        otpauth_uri (str):
        qr_svg (str):
        secret (str):
    """

    otpauth_uri: str
    qr_svg: str
    secret: str

    def to_dict(self) -> dict[str, Any]:
        otpauth_uri = self.otpauth_uri

        qr_svg = self.qr_svg

        secret = self.secret

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "otpauth_uri": otpauth_uri,
                "qr_svg": qr_svg,
                "secret": secret,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        otpauth_uri = d.pop("otpauth_uri")

        qr_svg = d.pop("qr_svg")

        secret = d.pop("secret")

        totp_enrolment_out = cls(
            otpauth_uri=otpauth_uri,
            qr_svg=qr_svg,
            secret=secret,
        )

        return totp_enrolment_out
