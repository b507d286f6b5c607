from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PagerdutyEnqueueResponse429")


@_attrs_define
class PagerdutyEnqueueResponse429:
    """
    Attributes:
        message (str):
        status (str):
        dedup_key (str | Unset):
        errors (list[str] | Unset):
        event_id (str | Unset): the server's event id (GET …/events/{id})
    """

    message: str
    status: str
    dedup_key: str | Unset = UNSET
    errors: list[str] | Unset = UNSET
    event_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        status = self.status

        dedup_key = self.dedup_key

        errors: list[str] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = self.errors

        event_id = self.event_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message": message,
                "status": status,
            }
        )
        if dedup_key is not UNSET:
            field_dict["dedup_key"] = dedup_key
        if errors is not UNSET:
            field_dict["errors"] = errors
        if event_id is not UNSET:
            field_dict["event_id"] = event_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        message = d.pop("message")

        status = d.pop("status")

        dedup_key = d.pop("dedup_key", UNSET)

        errors = cast(list[str], d.pop("errors", UNSET))

        event_id = d.pop("event_id", UNSET)

        pagerduty_enqueue_response_429 = cls(
            message=message,
            status=status,
            dedup_key=dedup_key,
            errors=errors,
            event_id=event_id,
        )

        pagerduty_enqueue_response_429.additional_properties = d
        return pagerduty_enqueue_response_429

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
