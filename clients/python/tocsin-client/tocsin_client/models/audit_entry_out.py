from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.actor_out import ActorOut
    from ..models.audit_entry_out_detail import AuditEntryOutDetail
    from ..models.target_out import TargetOut


T = TypeVar("T", bound="AuditEntryOut")


@_attrs_define
class AuditEntryOut:
    """
    Attributes:
        action (str):
        actor (ActorOut):
        at (datetime.datetime):
        detail (AuditEntryOutDetail):
        id (str):
        target (TargetOut):
    """

    action: str
    actor: ActorOut
    at: datetime.datetime
    detail: AuditEntryOutDetail
    id: str
    target: TargetOut

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        actor = self.actor.to_dict()

        at = self.at.isoformat()

        detail = self.detail.to_dict()

        id = self.id

        target = self.target.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
                "actor": actor,
                "at": at,
                "detail": detail,
                "id": id,
                "target": target,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.actor_out import ActorOut
        from ..models.audit_entry_out_detail import AuditEntryOutDetail
        from ..models.target_out import TargetOut

        d = dict(src_dict)
        action = d.pop("action")

        actor = ActorOut.from_dict(d.pop("actor"))

        at = datetime.datetime.fromisoformat(d.pop("at"))

        detail = AuditEntryOutDetail.from_dict(d.pop("detail"))

        id = d.pop("id")

        target = TargetOut.from_dict(d.pop("target"))

        audit_entry_out = cls(
            action=action,
            actor=actor,
            at=at,
            detail=detail,
            id=id,
            target=target,
        )

        return audit_entry_out
