from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="AuthenticatorOut")


@_attrs_define
class AuthenticatorOut:
    """
    Attributes:
        created_at (datetime.datetime):
        id (str):
        last_used_at (datetime.datetime | None):
        name (str):
        sign_count (int):
    """

    created_at: datetime.datetime
    id: str
    last_used_at: datetime.datetime | None
    name: str
    sign_count: int

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        id = self.id

        last_used_at: None | str
        if isinstance(self.last_used_at, datetime.datetime):
            last_used_at = self.last_used_at.isoformat()
        else:
            last_used_at = self.last_used_at

        name = self.name

        sign_count = self.sign_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "last_used_at": last_used_at,
                "name": name,
                "sign_count": sign_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        id = d.pop("id")

        def _parse_last_used_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_used_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_used_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_used_at = _parse_last_used_at(d.pop("last_used_at"))

        name = d.pop("name")

        sign_count = d.pop("sign_count")

        authenticator_out = cls(
            created_at=created_at,
            id=id,
            last_used_at=last_used_at,
            name=name,
            sign_count=sign_count,
        )

        return authenticator_out
