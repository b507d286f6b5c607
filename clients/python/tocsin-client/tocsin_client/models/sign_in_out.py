from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.sign_in_out_status import SignInOutStatus

if TYPE_CHECKING:
    from ..models.session_created_out import SessionCreatedOut


T = TypeVar("T", bound="SignInOut")


@_attrs_define
class SignInOut:
    """
    Attributes:
        challenge (None | str): the pending step's secret, for the next call
        device_token (None | str): a new device's token: failures of others do not slow it
        expires_in (int | None): seconds the challenge lasts
        methods (list[str]): the second factors to prove (or to enrol); the session's when signed in
        session (None | SessionCreatedOut):
        status (SignInOutStatus):
    """

    challenge: None | str
    device_token: None | str
    expires_in: int | None
    methods: list[str]
    session: None | SessionCreatedOut
    status: SignInOutStatus

    def to_dict(self) -> dict[str, Any]:
        from ..models.session_created_out import SessionCreatedOut

        challenge: None | str
        challenge = self.challenge

        device_token: None | str
        device_token = self.device_token

        expires_in: int | None
        expires_in = self.expires_in

        methods = self.methods

        session: dict[str, Any] | None
        if isinstance(self.session, SessionCreatedOut):
            session = self.session.to_dict()
        else:
            session = self.session

        status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "challenge": challenge,
                "device_token": device_token,
                "expires_in": expires_in,
                "methods": methods,
                "session": session,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.session_created_out import SessionCreatedOut

        d = dict(src_dict)

        def _parse_challenge(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        challenge = _parse_challenge(d.pop("challenge"))

        def _parse_device_token(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        device_token = _parse_device_token(d.pop("device_token"))

        def _parse_expires_in(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        expires_in = _parse_expires_in(d.pop("expires_in"))

        methods = cast(list[str], d.pop("methods"))

        def _parse_session(data: object) -> None | SessionCreatedOut:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                session_type_0 = SessionCreatedOut.from_dict(data)

                return session_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SessionCreatedOut, data)

        session = _parse_session(d.pop("session"))

        status = SignInOutStatus(d.pop("status"))

        sign_in_out = cls(
            challenge=challenge,
            device_token=device_token,
            expires_in=expires_in,
            methods=methods,
            session=session,
            status=status,
        )

        return sign_in_out
