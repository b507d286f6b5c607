from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodsOut")


@_attrs_define
class MethodsOut:
    """
    Attributes:
        enforce_mfa (bool):
        magic_link (bool):
        password (bool):
        password_reset (bool):
        totp (bool):
        webauthn (bool):
    """

    enforce_mfa: bool
    magic_link: bool
    password: bool
    password_reset: bool
    totp: bool
    webauthn: bool

    def to_dict(self) -> dict[str, Any]:
        enforce_mfa = self.enforce_mfa

        magic_link = self.magic_link

        password = self.password

        password_reset = self.password_reset

        totp = self.totp

        webauthn = self.webauthn

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "enforce_mfa": enforce_mfa,
                "magic_link": magic_link,
                "password": password,
                "password_reset": password_reset,
                "totp": totp,
                "webauthn": webauthn,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        enforce_mfa = d.pop("enforce_mfa")

        magic_link = d.pop("magic_link")

        password = d.pop("password")

        password_reset = d.pop("password_reset")

        totp = d.pop("totp")

        webauthn = d.pop("webauthn")

        methods_out = cls(
            enforce_mfa=enforce_mfa,
            magic_link=magic_link,
            password=password,
            password_reset=password_reset,
            totp=totp,
            webauthn=webauthn,
        )

        return methods_out
