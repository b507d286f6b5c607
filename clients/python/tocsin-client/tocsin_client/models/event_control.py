from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.event_control_action_type_0 import EventControlActionType0
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_control_metrics_type_0 import EventControlMetricsType0


T = TypeVar("T", bound="EventControl")


@_attrs_define
class EventControl:
    """
    Attributes:
        action (EventControlActionType0 | None | Unset):
        areas (list[str] | None | Unset):
        metrics (EventControlMetricsType0 | None | Unset):
        partition_key (None | str | Unset):
    """

    action: EventControlActionType0 | None | Unset = UNSET
    areas: list[str] | None | Unset = UNSET
    metrics: EventControlMetricsType0 | None | Unset = UNSET
    partition_key: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_control_metrics_type_0 import EventControlMetricsType0

        action: None | str | Unset
        if isinstance(self.action, Unset):
            action = UNSET
        elif isinstance(self.action, EventControlActionType0):
            action = self.action.value
        else:
            action = self.action

        areas: list[str] | None | Unset
        if isinstance(self.areas, Unset):
            areas = UNSET
        elif isinstance(self.areas, list):
            areas = self.areas

        else:
            areas = self.areas

        metrics: dict[str, Any] | None | Unset
        if isinstance(self.metrics, Unset):
            metrics = UNSET
        elif isinstance(self.metrics, EventControlMetricsType0):
            metrics = self.metrics.to_dict()
        else:
            metrics = self.metrics

        partition_key: None | str | Unset
        if isinstance(self.partition_key, Unset):
            partition_key = UNSET
        else:
            partition_key = self.partition_key

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if action is not UNSET:
            field_dict["action"] = action
        if areas is not UNSET:
            field_dict["areas"] = areas
        if metrics is not UNSET:
            field_dict["metrics"] = metrics
        if partition_key is not UNSET:
            field_dict["partition_key"] = partition_key

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.event_control_metrics_type_0 import EventControlMetricsType0

        d = dict(src_dict)

        def _parse_action(data: object) -> EventControlActionType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                action_type_0 = EventControlActionType0(data)

                return action_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventControlActionType0 | None | Unset, data)

        action = _parse_action(d.pop("action", UNSET))

        def _parse_areas(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                areas_type_0 = cast(list[str], data)

                return areas_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        areas = _parse_areas(d.pop("areas", UNSET))

        def _parse_metrics(data: object) -> EventControlMetricsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metrics_type_0 = EventControlMetricsType0.from_dict(data)

                return metrics_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventControlMetricsType0 | None | Unset, data)

        metrics = _parse_metrics(d.pop("metrics", UNSET))

        def _parse_partition_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        partition_key = _parse_partition_key(d.pop("partition_key", UNSET))

        event_control = cls(
            action=action,
            areas=areas,
            metrics=metrics,
            partition_key=partition_key,
        )

        return event_control
