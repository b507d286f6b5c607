from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.topic_event_out_decision_type_0 import TopicEventOutDecisionType0
from ..models.topic_event_out_status_type_0 import TopicEventOutStatusType0
from ..types import UNSET, Unset

T = TypeVar("T", bound="TopicEventOut")


@_attrs_define
class TopicEventOut:
    """
    Attributes:
        accepted_at (datetime.datetime | None):
        id (str):
        partition_key (None | str):
        status (None | TopicEventOutStatusType0):
        decision (None | TopicEventOutDecisionType0 | Unset):
    """

    accepted_at: datetime.datetime | None
    id: str
    partition_key: None | str
    status: None | TopicEventOutStatusType0
    decision: None | TopicEventOutDecisionType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        accepted_at: None | str
        if isinstance(self.accepted_at, datetime.datetime):
            accepted_at = self.accepted_at.isoformat()
        else:
            accepted_at = self.accepted_at

        id = self.id

        partition_key: None | str
        partition_key = self.partition_key

        status: None | str
        if isinstance(self.status, TopicEventOutStatusType0):
            status = self.status.value
        else:
            status = self.status

        decision: None | str | Unset
        if isinstance(self.decision, Unset):
            decision = UNSET
        elif isinstance(self.decision, TopicEventOutDecisionType0):
            decision = self.decision.value
        else:
            decision = self.decision

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "accepted_at": accepted_at,
                "id": id,
                "partition_key": partition_key,
                "status": status,
            }
        )
        if decision is not UNSET:
            field_dict["decision"] = decision

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
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

        def _parse_partition_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        partition_key = _parse_partition_key(d.pop("partition_key"))

        def _parse_status(data: object) -> None | TopicEventOutStatusType0:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_type_0 = TopicEventOutStatusType0(data)

                return status_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TopicEventOutStatusType0, data)

        status = _parse_status(d.pop("status"))

        def _parse_decision(data: object) -> None | TopicEventOutDecisionType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                decision_type_0 = TopicEventOutDecisionType0(data)

                return decision_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TopicEventOutDecisionType0 | Unset, data)

        decision = _parse_decision(d.pop("decision", UNSET))

        topic_event_out = cls(
            accepted_at=accepted_at,
            id=id,
            partition_key=partition_key,
            status=status,
            decision=decision,
        )

        return topic_event_out
