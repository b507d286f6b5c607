from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="MeOut")


@_attrs_define
class MeOut:
    """
    Attributes:
        account_id (str):
        csrf_token (None | str):
        display_name (str):
        email (None | str):
        methods (list[str]):
        organization_id (str):
        session_id (str):
    """

    account_id: str
    csrf_token: None | str
    display_name: str
    email: None | str
    methods: list[str]
    organization_id: str
    session_id: str

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        csrf_token: None | str
        csrf_token = self.csrf_token

        display_name = self.display_name

        email: None | str
        email = self.email

        methods = self.methods

        organization_id = self.organization_id

        session_id = self.session_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account_id": account_id,
                "csrf_token": csrf_token,
                "display_name": display_name,
                "email": email,
                "methods": methods,
                "organization_id": organization_id,
                "session_id": session_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        def _parse_csrf_token(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        csrf_token = _parse_csrf_token(d.pop("csrf_token"))

        display_name = d.pop("display_name")

        def _parse_email(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        email = _parse_email(d.pop("email"))

        methods = cast(list[str], d.pop("methods"))

        organization_id = d.pop("organization_id")

        session_id = d.pop("session_id")

        me_out = cls(
            account_id=account_id,
            csrf_token=csrf_token,
            display_name=display_name,
            email=email,
            methods=methods,
            organization_id=organization_id,
            session_id=session_id,
        )

        return me_out
