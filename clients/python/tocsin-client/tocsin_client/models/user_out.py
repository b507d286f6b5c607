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

from ..models.user_out_status import UserOutStatus

T = TypeVar("T", bound="UserOut")


@_attrs_define
class UserOut:
    """
    Attributes:
        created_at (datetime.datetime):
        display_name (str):
        email (None | str):
        id (str):
        kind (Literal['user_account']):
        name (str):
        organization_id (str):
        status (UserOutStatus):
    """

    created_at: datetime.datetime
    display_name: str
    email: None | str
    id: str
    kind: Literal["user_account"]
    name: str
    organization_id: str
    status: UserOutStatus

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        display_name = self.display_name

        email: None | str
        email = self.email

        id = self.id

        kind = self.kind

        name = self.name

        organization_id = self.organization_id

        status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "display_name": display_name,
                "email": email,
                "id": id,
                "kind": kind,
                "name": name,
                "organization_id": organization_id,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        display_name = d.pop("display_name")

        def _parse_email(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        email = _parse_email(d.pop("email"))

        id = d.pop("id")

        kind = cast(Literal["user_account"], d.pop("kind"))
        if kind != "user_account":
            raise ValueError(f"kind must match const 'user_account', got '{kind}'")

        name = d.pop("name")

        organization_id = d.pop("organization_id")

        status = UserOutStatus(d.pop("status"))

        user_out = cls(
            created_at=created_at,
            display_name=display_name,
            email=email,
            id=id,
            kind=kind,
            name=name,
            organization_id=organization_id,
            status=status,
        )

        return user_out
