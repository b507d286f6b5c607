from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="TimelineEntryOut")


@_attrs_define
class TimelineEntryOut:
    """
    Attributes:
        author_id (None | str):
        created_at (datetime.datetime | None):
        event_id (None | str):
        id (str):
        kind (str):
        message (str):
    """

    author_id: None | str
    created_at: datetime.datetime | None
    event_id: None | str
    id: str
    kind: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        author_id: None | str
        author_id = self.author_id

        created_at: None | str
        if isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        event_id: None | str
        event_id = self.event_id

        id = self.id

        kind = self.kind

        message = self.message

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "author_id": author_id,
                "created_at": created_at,
                "event_id": event_id,
                "id": id,
                "kind": kind,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_author_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        author_id = _parse_author_id(d.pop("author_id"))

        def _parse_created_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_at_type_0 = datetime.datetime.fromisoformat(data)

                return created_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        created_at = _parse_created_at(d.pop("created_at"))

        def _parse_event_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        event_id = _parse_event_id(d.pop("event_id"))

        id = d.pop("id")

        kind = d.pop("kind")

        message = d.pop("message")

        timeline_entry_out = cls(
            author_id=author_id,
            created_at=created_at,
            event_id=event_id,
            id=id,
            kind=kind,
            message=message,
        )

        return timeline_entry_out
