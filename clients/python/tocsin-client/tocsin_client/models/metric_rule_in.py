from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.metric_rule_in_mode import MetricRuleInMode
from ..types import UNSET, Unset

T = TypeVar("T", bound="MetricRuleIn")


@_attrs_define
class MetricRuleIn:
    """
    Attributes:
        metric_name (str):
        threshold (float):
        mode (MetricRuleInMode | Unset):  Default: MetricRuleInMode.ABSOLUTE.
    """

    metric_name: str
    threshold: float
    mode: MetricRuleInMode | Unset = MetricRuleInMode.ABSOLUTE

    def to_dict(self) -> dict[str, Any]:
        metric_name = self.metric_name

        threshold = self.threshold

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "metric_name": metric_name,
                "threshold": threshold,
            }
        )
        if mode is not UNSET:
            field_dict["mode"] = mode

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        metric_name = d.pop("metric_name")

        threshold = d.pop("threshold")

        _mode = d.pop("mode", UNSET)
        mode: MetricRuleInMode | Unset
        if isinstance(_mode, Unset):
            mode = UNSET
        else:
            mode = MetricRuleInMode(_mode)

        metric_rule_in = cls(
            metric_name=metric_name,
            threshold=threshold,
            mode=mode,
        )

        return metric_rule_in
