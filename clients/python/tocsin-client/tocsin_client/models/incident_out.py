from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.incident_out_mode import IncidentOutMode
from ..models.incident_out_status import IncidentOutStatus

T = TypeVar("T", bound="IncidentOut")


@_attrs_define
class IncidentOut:
    """
    Attributes:
        acknowledged_at (datetime.datetime | None):
        created_at (datetime.datetime | None):
        event_id (None | str): the publisher's event.id
        id (str):
        member_group_ids (list[str]):
        member_user_ids (list[str]):
        mode (IncidentOutMode):
        operation_book_id (str):
        partition_key (None | str):
        resolved_at (datetime.datetime | None):
        server_event_id (str):
        status (IncidentOutStatus):
        title (str):
        topic_id (str):
        workflow_id (str):
    """

    acknowledged_at: datetime.datetime | None
    created_at: datetime.datetime | None
    event_id: None | str
    id: str
    member_group_ids: list[str]
    member_user_ids: list[str]
    mode: IncidentOutMode
    operation_book_id: str
    partition_key: None | str
    resolved_at: datetime.datetime | None
    server_event_id: str
    status: IncidentOutStatus
    title: str
    topic_id: str
    workflow_id: str

    def to_dict(self) -> dict[str, Any]:
        acknowledged_at: None | str
        if isinstance(self.acknowledged_at, datetime.datetime):
            acknowledged_at = self.acknowledged_at.isoformat()
        else:
            acknowledged_at = self.acknowledged_at

        created_at: None | str
        if isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        event_id: None | str
        event_id = self.event_id

        id = self.id

        member_group_ids = self.member_group_ids

        member_user_ids = self.member_user_ids

        mode = self.mode.value

        operation_book_id = self.operation_book_id

        partition_key: None | str
        partition_key = self.partition_key

        resolved_at: None | str
        if isinstance(self.resolved_at, datetime.datetime):
            resolved_at = self.resolved_at.isoformat()
        else:
            resolved_at = self.resolved_at

        server_event_id = self.server_event_id

        status = self.status.value

        title = self.title

        topic_id = self.topic_id

        workflow_id = self.workflow_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "acknowledged_at": acknowledged_at,
                "created_at": created_at,
                "event_id": event_id,
                "id": id,
                "member_group_ids": member_group_ids,
                "member_user_ids": member_user_ids,
                "mode": mode,
                "operation_book_id": operation_book_id,
                "partition_key": partition_key,
                "resolved_at": resolved_at,
                "server_event_id": server_event_id,
                "status": status,
                "title": title,
                "topic_id": topic_id,
                "workflow_id": workflow_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_acknowledged_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                acknowledged_at_type_0 = datetime.datetime.fromisoformat(data)

                return acknowledged_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        acknowledged_at = _parse_acknowledged_at(d.pop("acknowledged_at"))

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

        member_group_ids = cast(list[str], d.pop("member_group_ids"))

        member_user_ids = cast(list[str], d.pop("member_user_ids"))

        mode = IncidentOutMode(d.pop("mode"))

        operation_book_id = d.pop("operation_book_id")

        def _parse_partition_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        partition_key = _parse_partition_key(d.pop("partition_key"))

        def _parse_resolved_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                resolved_at_type_0 = datetime.datetime.fromisoformat(data)

                return resolved_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        resolved_at = _parse_resolved_at(d.pop("resolved_at"))

        server_event_id = d.pop("server_event_id")

        status = IncidentOutStatus(d.pop("status"))

        title = d.pop("title")

        topic_id = d.pop("topic_id")

        workflow_id = d.pop("workflow_id")

        incident_out = cls(
            acknowledged_at=acknowledged_at,
            created_at=created_at,
            event_id=event_id,
            id=id,
            member_group_ids=member_group_ids,
            member_user_ids=member_user_ids,
            mode=mode,
            operation_book_id=operation_book_id,
            partition_key=partition_key,
            resolved_at=resolved_at,
            server_event_id=server_event_id,
            status=status,
            title=title,
            topic_id=topic_id,
            workflow_id=workflow_id,
        )

        return incident_out
