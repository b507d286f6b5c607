from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.control_policy_out_status import ControlPolicyOutStatus
from ..models.control_policy_out_type import ControlPolicyOutType

if TYPE_CHECKING:
    from ..models.metric_rule_in import MetricRuleIn


T = TypeVar("T", bound="ControlPolicyOut")


@_attrs_define
class ControlPolicyOut:
    """A stored event-control policy (checked as a ControlPolicyProfile when it was saved).

    Attributes:
        auto_resolve_duration (float):
        exit_stable_limit (int):
        peak_hold_duration (float):
        rules (list[MetricRuleIn]):
        status (ControlPolicyOutStatus):
        type_ (ControlPolicyOutType):
    """

    auto_resolve_duration: float
    exit_stable_limit: int
    peak_hold_duration: float
    rules: list[MetricRuleIn]
    status: ControlPolicyOutStatus
    type_: ControlPolicyOutType

    def to_dict(self) -> dict[str, Any]:
        auto_resolve_duration = self.auto_resolve_duration

        exit_stable_limit = self.exit_stable_limit

        peak_hold_duration = self.peak_hold_duration

        rules = []
        for rules_item_data in self.rules:
            rules_item = rules_item_data.to_dict()
            rules.append(rules_item)

        status = self.status.value

        type_ = self.type_.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "auto_resolve_duration": auto_resolve_duration,
                "exit_stable_limit": exit_stable_limit,
                "peak_hold_duration": peak_hold_duration,
                "rules": rules,
                "status": status,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.metric_rule_in import MetricRuleIn

        d = dict(src_dict)
        auto_resolve_duration = d.pop("auto_resolve_duration")

        exit_stable_limit = d.pop("exit_stable_limit")

        peak_hold_duration = d.pop("peak_hold_duration")

        rules = []
        _rules = d.pop("rules")
        for rules_item_data in _rules:
            rules_item = MetricRuleIn.from_dict(rules_item_data)

            rules.append(rules_item)

        status = ControlPolicyOutStatus(d.pop("status"))

        type_ = ControlPolicyOutType(d.pop("type"))

        control_policy_out = cls(
            auto_resolve_duration=auto_resolve_duration,
            exit_stable_limit=exit_stable_limit,
            peak_hold_duration=peak_hold_duration,
            rules=rules,
            status=status,
            type_=type_,
        )

        return control_policy_out
