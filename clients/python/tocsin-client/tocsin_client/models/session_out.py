from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="SessionOut")


@_attrs_define
class SessionOut:
    """
    Attributes:
        address (str):
        created_at (datetime.datetime):
        current (bool):
        expires_at (datetime.datetime):
        id (str):
        methods (list[str]):
        user_agent (str):
    """

    address: str
    created_at: datetime.datetime
    current: bool
    expires_at: datetime.datetime
    id: str
    methods: list[str]
    user_agent: str

    def to_dict(self) -> dict[str, Any]:
        address = self.address

        created_at = self.created_at.isoformat()

        current = self.current

        expires_at = self.expires_at.isoformat()

        id = self.id

        methods = self.methods

        user_agent = self.user_agent

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "address": address,
                "created_at": created_at,
                "current": current,
                "expires_at": expires_at,
                "id": id,
                "methods": methods,
                "user_agent": user_agent,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        address = d.pop("address")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        current = d.pop("current")

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        id = d.pop("id")

        methods = cast(list[str], d.pop("methods"))

        user_agent = d.pop("user_agent")

        session_out = cls(
            address=address,
            created_at=created_at,
            current=current,
            expires_at=expires_at,
            id=id,
            methods=methods,
            user_agent=user_agent,
        )

        return session_out
