from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.pagerduty_enqueue_body_payload_severity import (
    PagerdutyEnqueueBodyPayloadSeverity,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="PagerdutyEnqueueBodyPayload")


@_attrs_define
class PagerdutyEnqueueBodyPayload:
    """
    Attributes:
        severity (PagerdutyEnqueueBodyPayloadSeverity):
        source (str):
        summary (str):
        class_ (str | Unset):
        component (str | Unset):
        custom_details (Any | Unset):
        group (str | Unset):
        timestamp (str | Unset):
    """

    severity: PagerdutyEnqueueBodyPayloadSeverity
    source: str
    summary: str
    class_: str | Unset = UNSET
    component: str | Unset = UNSET
    custom_details: Any | Unset = UNSET
    group: str | Unset = UNSET
    timestamp: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        severity = self.severity.value

        source = self.source

        summary = self.summary

        class_ = self.class_

        component = self.component

        custom_details = self.custom_details

        group = self.group

        timestamp = self.timestamp

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "severity": severity,
                "source": source,
                "summary": summary,
            }
        )
        if class_ is not UNSET:
            field_dict["class"] = class_
        if component is not UNSET:
            field_dict["component"] = component
        if custom_details is not UNSET:
            field_dict["custom_details"] = custom_details
        if group is not UNSET:
            field_dict["group"] = group
        if timestamp is not UNSET:
            field_dict["timestamp"] = timestamp

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        severity = PagerdutyEnqueueBodyPayloadSeverity(d.pop("severity"))

        source = d.pop("source")

        summary = d.pop("summary")

        class_ = d.pop("class", UNSET)

        component = d.pop("component", UNSET)

        custom_details = d.pop("custom_details", UNSET)

        group = d.pop("group", UNSET)

        timestamp = d.pop("timestamp", UNSET)

        pagerduty_enqueue_body_payload = cls(
            severity=severity,
            source=source,
            summary=summary,
            class_=class_,
            component=component,
            custom_details=custom_details,
            group=group,
            timestamp=timestamp,
        )

        pagerduty_enqueue_body_payload.additional_properties = d
        return pagerduty_enqueue_body_payload

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
