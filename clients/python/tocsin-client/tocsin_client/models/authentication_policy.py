from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="AuthenticationPolicy")


@_attrs_define
class AuthenticationPolicy:
    """PUT replaces the whole policy; a missing field takes its default.

    Attributes:
        enforce_mfa (bool | Unset):  Default: False.
        magic_link_enabled (bool | Unset):  Default: False.
        password_login_enabled (bool | Unset):  Default: True.
        password_reset_token_expires_in_seconds (int | Unset):  Default: 900.
        password_self_reset_enabled (bool | Unset):  Default: False.
        totp_enabled (bool | Unset):  Default: True.
        webauthn_enabled (bool | Unset):  Default: True.
    """

    enforce_mfa: bool | Unset = False
    magic_link_enabled: bool | Unset = False
    password_login_enabled: bool | Unset = True
    password_reset_token_expires_in_seconds: int | Unset = 900
    password_self_reset_enabled: bool | Unset = False
    totp_enabled: bool | Unset = True
    webauthn_enabled: bool | Unset = True

    def to_dict(self) -> dict[str, Any]:
        enforce_mfa = self.enforce_mfa

        magic_link_enabled = self.magic_link_enabled

        password_login_enabled = self.password_login_enabled

        password_reset_token_expires_in_seconds = (
            self.password_reset_token_expires_in_seconds
        )

        password_self_reset_enabled = self.password_self_reset_enabled

        totp_enabled = self.totp_enabled

        webauthn_enabled = self.webauthn_enabled

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if enforce_mfa is not UNSET:
            field_dict["enforce_mfa"] = enforce_mfa
        if magic_link_enabled is not UNSET:
            field_dict["magic_link_enabled"] = magic_link_enabled
        if password_login_enabled is not UNSET:
            field_dict["password_login_enabled"] = password_login_enabled
        if password_reset_token_expires_in_seconds is not UNSET:
            field_dict["password_reset_token_expires_in_seconds"] = (
                password_reset_token_expires_in_seconds
            )
        if password_self_reset_enabled is not UNSET:
            field_dict["password_self_reset_enabled"] = password_self_reset_enabled
        if totp_enabled is not UNSET:
            field_dict["totp_enabled"] = totp_enabled
        if webauthn_enabled is not UNSET:
            field_dict["webauthn_enabled"] = webauthn_enabled

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        enforce_mfa = d.pop("enforce_mfa", UNSET)

        magic_link_enabled = d.pop("magic_link_enabled", UNSET)

        password_login_enabled = d.pop("password_login_enabled", UNSET)

        password_reset_token_expires_in_seconds = d.pop(
            "password_reset_token_expires_in_seconds", UNSET
        )

        password_self_reset_enabled = d.pop("password_self_reset_enabled", UNSET)

        totp_enabled = d.pop("totp_enabled", UNSET)

        webauthn_enabled = d.pop("webauthn_enabled", UNSET)

        authentication_policy = cls(
            enforce_mfa=enforce_mfa,
            magic_link_enabled=magic_link_enabled,
            password_login_enabled=password_login_enabled,
            password_reset_token_expires_in_seconds=password_reset_token_expires_in_seconds,
            password_self_reset_enabled=password_self_reset_enabled,
            totp_enabled=totp_enabled,
            webauthn_enabled=webauthn_enabled,
        )

        return authentication_policy
