from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.sign_in_out import SignInOut


T = TypeVar("T", bound="TotpConfirmedOut")


@_attrs_define
class TotpConfirmedOut:
    """
    Attributes:
        recovery_codes (list[str]): shown only here; each works once
        signin (None | SignInOut):
    """

    recovery_codes: list[str]
    signin: None | SignInOut

    def to_dict(self) -> dict[str, Any]:
        from ..models.sign_in_out import SignInOut

        recovery_codes = self.recovery_codes

        signin: dict[str, Any] | None
        if isinstance(self.signin, SignInOut):
            signin = self.signin.to_dict()
        else:
            signin = self.signin

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "recovery_codes": recovery_codes,
                "signin": signin,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.sign_in_out import SignInOut

        d = dict(src_dict)
        recovery_codes = cast(list[str], d.pop("recovery_codes"))

        def _parse_signin(data: object) -> None | SignInOut:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                signin_type_0 = SignInOut.from_dict(data)

                return signin_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SignInOut, data)

        signin = _parse_signin(d.pop("signin"))

        totp_confirmed_out = cls(
            recovery_codes=recovery_codes,
            signin=signin,
        )

        return totp_confirmed_out
