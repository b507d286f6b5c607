from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="DeliveryOut")


@_attrs_define
class DeliveryOut:
    """
    Attributes:
        action_index (int):
        attempts (int):
        decision (str):
        event_id (str):
        id (str):
        kind (str):
        last_error (None | str):
        last_status_code (int | None):
        mode (str):
        replays (int):
        status (str):
        target (None | str):
        updated_at (datetime.datetime):
        workflow_id (str):
    """

    action_index: int
    attempts: int
    decision: str
    event_id: str
    id: str
    kind: str
    last_error: None | str
    last_status_code: int | None
    mode: str
    replays: int
    status: str
    target: None | str
    updated_at: datetime.datetime
    workflow_id: str

    def to_dict(self) -> dict[str, Any]:
        action_index = self.action_index

        attempts = self.attempts

        decision = self.decision

        event_id = self.event_id

        id = self.id

        kind = self.kind

        last_error: None | str
        last_error = self.last_error

        last_status_code: int | None
        last_status_code = self.last_status_code

        mode = self.mode

        replays = self.replays

        status = self.status

        target: None | str
        target = self.target

        updated_at = self.updated_at.isoformat()

        workflow_id = self.workflow_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action_index": action_index,
                "attempts": attempts,
                "decision": decision,
                "event_id": event_id,
                "id": id,
                "kind": kind,
                "last_error": last_error,
                "last_status_code": last_status_code,
                "mode": mode,
                "replays": replays,
                "status": status,
                "target": target,
                "updated_at": updated_at,
                "workflow_id": workflow_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        action_index = d.pop("action_index")

        attempts = d.pop("attempts")

        decision = d.pop("decision")

        event_id = d.pop("event_id")

        id = d.pop("id")

        kind = d.pop("kind")

        def _parse_last_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_error = _parse_last_error(d.pop("last_error"))

        def _parse_last_status_code(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_status_code = _parse_last_status_code(d.pop("last_status_code"))

        mode = d.pop("mode")

        replays = d.pop("replays")

        status = d.pop("status")

        def _parse_target(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        target = _parse_target(d.pop("target"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        workflow_id = d.pop("workflow_id")

        delivery_out = cls(
            action_index=action_index,
            attempts=attempts,
            decision=decision,
            event_id=event_id,
            id=id,
            kind=kind,
            last_error=last_error,
            last_status_code=last_status_code,
            mode=mode,
            replays=replays,
            status=status,
            target=target,
            updated_at=updated_at,
            workflow_id=workflow_id,
        )

        return delivery_out
