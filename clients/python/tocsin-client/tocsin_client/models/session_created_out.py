from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="SessionCreatedOut")


@_attrs_define
class SessionCreatedOut:
    """
    Attributes:
        access_token (str): the API access token (Bearer); returned only here
        account_id (str):
        csrf_token (str): send it in X-CSRF-Token with the cookie on every change
        expires_in (int): seconds the access token lasts
        id (str):
        methods (list[str]):
        organization_id (str):
        session_expires_at (datetime.datetime):
        token_type (Literal['Bearer']):
    """

    access_token: str
    account_id: str
    csrf_token: str
    expires_in: int
    id: str
    methods: list[str]
    organization_id: str
    session_expires_at: datetime.datetime
    token_type: Literal["Bearer"]

    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        account_id = self.account_id

        csrf_token = self.csrf_token

        expires_in = self.expires_in

        id = self.id

        methods = self.methods

        organization_id = self.organization_id

        session_expires_at = self.session_expires_at.isoformat()

        token_type = self.token_type

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "access_token": access_token,
                "account_id": account_id,
                "csrf_token": csrf_token,
                "expires_in": expires_in,
                "id": id,
                "methods": methods,
                "organization_id": organization_id,
                "session_expires_at": session_expires_at,
                "token_type": token_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        access_token = d.pop("access_token")

        account_id = d.pop("account_id")

        csrf_token = d.pop("csrf_token")

        expires_in = d.pop("expires_in")

        id = d.pop("id")

        methods = cast(list[str], d.pop("methods"))

        organization_id = d.pop("organization_id")

        session_expires_at = datetime.datetime.fromisoformat(
            d.pop("session_expires_at")
        )

        token_type = cast(Literal["Bearer"], d.pop("token_type"))
        if token_type != "Bearer":
            raise ValueError(
                f"token_type must match const 'Bearer', got '{token_type}'"
            )

        session_created_out = cls(
            access_token=access_token,
            account_id=account_id,
            csrf_token=csrf_token,
            expires_in=expires_in,
            id=id,
            methods=methods,
            organization_id=organization_id,
            session_expires_at=session_expires_at,
            token_type=token_type,
        )

        return session_created_out
