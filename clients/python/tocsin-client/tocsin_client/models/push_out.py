from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.push_out_apns import PushOutApns
    from ..models.push_out_fcm import PushOutFcm


T = TypeVar("T", bound="PushOut")


@_attrs_define
class PushOut:
    """
    Attributes:
        apns (PushOutApns):
        body (str):
        created_at (datetime.datetime):
        event_id (str):
        fcm (PushOutFcm):
        group_ids (list[str]):
        id (str):
        mode (str):
        title (str):
        user_ids (list[str]):
        workflow_id (str):
    """

    apns: PushOutApns
    body: str
    created_at: datetime.datetime
    event_id: str
    fcm: PushOutFcm
    group_ids: list[str]
    id: str
    mode: str
    title: str
    user_ids: list[str]
    workflow_id: str

    def to_dict(self) -> dict[str, Any]:
        apns = self.apns.to_dict()

        body = self.body

        created_at = self.created_at.isoformat()

        event_id = self.event_id

        fcm = self.fcm.to_dict()

        group_ids = self.group_ids

        id = self.id

        mode = self.mode

        title = self.title

        user_ids = self.user_ids

        workflow_id = self.workflow_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "apns": apns,
                "body": body,
                "created_at": created_at,
                "event_id": event_id,
                "fcm": fcm,
                "group_ids": group_ids,
                "id": id,
                "mode": mode,
                "title": title,
                "user_ids": user_ids,
                "workflow_id": workflow_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.push_out_apns import PushOutApns
        from ..models.push_out_fcm import PushOutFcm

        d = dict(src_dict)
        apns = PushOutApns.from_dict(d.pop("apns"))

        body = d.pop("body")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        event_id = d.pop("event_id")

        fcm = PushOutFcm.from_dict(d.pop("fcm"))

        group_ids = cast(list[str], d.pop("group_ids"))

        id = d.pop("id")

        mode = d.pop("mode")

        title = d.pop("title")

        user_ids = cast(list[str], d.pop("user_ids"))

        workflow_id = d.pop("workflow_id")

        push_out = cls(
            apns=apns,
            body=body,
            created_at=created_at,
            event_id=event_id,
            fcm=fcm,
            group_ids=group_ids,
            id=id,
            mode=mode,
            title=title,
            user_ids=user_ids,
            workflow_id=workflow_id,
        )

        return push_out
