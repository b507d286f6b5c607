from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.event_trace_out_steps_item import EventTraceOutStepsItem


T = TypeVar("T", bound="EventTraceOut")


@_attrs_define
class EventTraceOut:
    """
    Attributes:
        accepted_at (datetime.datetime | None):
        id (str):
        organization_id (str):
        steps (list[EventTraceOutStepsItem]): each step: {step, ...its outcome}
    """

    accepted_at: datetime.datetime | None
    id: str
    organization_id: str
    steps: list[EventTraceOutStepsItem]

    def to_dict(self) -> dict[str, Any]:
        accepted_at: None | str
        if isinstance(self.accepted_at, datetime.datetime):
            accepted_at = self.accepted_at.isoformat()
        else:
            accepted_at = self.accepted_at

        id = self.id

        organization_id = self.organization_id

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "accepted_at": accepted_at,
                "id": id,
                "organization_id": organization_id,
                "steps": steps,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.event_trace_out_steps_item import EventTraceOutStepsItem

        d = dict(src_dict)

        def _parse_accepted_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                accepted_at_type_0 = datetime.datetime.fromisoformat(data)

                return accepted_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        accepted_at = _parse_accepted_at(d.pop("accepted_at"))

        id = d.pop("id")

        organization_id = d.pop("organization_id")

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = EventTraceOutStepsItem.from_dict(steps_item_data)

            steps.append(steps_item)

        event_trace_out = cls(
            accepted_at=accepted_at,
            id=id,
            organization_id=organization_id,
            steps=steps,
        )

        return event_trace_out
