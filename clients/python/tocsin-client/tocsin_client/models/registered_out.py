from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.authenticator_out import AuthenticatorOut
    from ..models.sign_in_out import SignInOut


T = TypeVar("T", bound="RegisteredOut")


@_attrs_define
class RegisteredOut:
    """
    Attributes:
        authenticator (AuthenticatorOut):
        signin (None | SignInOut): the completed sign-in when this was an enrolment step
    """

    authenticator: AuthenticatorOut
    signin: None | SignInOut

    def to_dict(self) -> dict[str, Any]:
        from ..models.sign_in_out import SignInOut

        authenticator = self.authenticator.to_dict()

        signin: dict[str, Any] | None
        if isinstance(self.signin, SignInOut):
            signin = self.signin.to_dict()
        else:
            signin = self.signin

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "authenticator": authenticator,
                "signin": signin,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.authenticator_out import AuthenticatorOut
        from ..models.sign_in_out import SignInOut

        d = dict(src_dict)
        authenticator = AuthenticatorOut.from_dict(d.pop("authenticator"))

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

        registered_out = cls(
            authenticator=authenticator,
            signin=signin,
        )

        return registered_out
