from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.control_policy_profile_status import ControlPolicyProfileStatus
from ..models.control_policy_profile_type import ControlPolicyProfileType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.metric_rule_in import MetricRuleIn


T = TypeVar("T", bound="ControlPolicyProfile")


@_attrs_define
class ControlPolicyProfile:
    """A topic's event-control policy: BYPASS, METRIC or SET, and its bounds (docs/concepts/event-control.md).

    Attributes:
        auto_resolve_duration (float | Unset):  Default: 0.0.
        exit_stable_limit (int | Unset):  Default: 0.
        peak_hold_duration (float | Unset):  Default: 0.0.
        rules (list[MetricRuleIn] | Unset):
        status (ControlPolicyProfileStatus | Unset):  Default: ControlPolicyProfileStatus.ACTIVE.
        type_ (ControlPolicyProfileType | Unset):  Default: ControlPolicyProfileType.BYPASS.
    """

    auto_resolve_duration: float | Unset = 0.0
    exit_stable_limit: int | Unset = 0
    peak_hold_duration: float | Unset = 0.0
    rules: list[MetricRuleIn] | Unset = UNSET
    status: ControlPolicyProfileStatus | Unset = ControlPolicyProfileStatus.ACTIVE
    type_: ControlPolicyProfileType | Unset = ControlPolicyProfileType.BYPASS

    def to_dict(self) -> dict[str, Any]:
        auto_resolve_duration = self.auto_resolve_duration

        exit_stable_limit = self.exit_stable_limit

        peak_hold_duration = self.peak_hold_duration

        rules: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.rules, Unset):
            rules = []
            for rules_item_data in self.rules:
                rules_item = rules_item_data.to_dict()
                rules.append(rules_item)

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if auto_resolve_duration is not UNSET:
            field_dict["auto_resolve_duration"] = auto_resolve_duration
        if exit_stable_limit is not UNSET:
            field_dict["exit_stable_limit"] = exit_stable_limit
        if peak_hold_duration is not UNSET:
            field_dict["peak_hold_duration"] = peak_hold_duration
        if rules is not UNSET:
            field_dict["rules"] = rules
        if status is not UNSET:
            field_dict["status"] = status
        if type_ is not UNSET:
            field_dict["type"] = type_

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.metric_rule_in import MetricRuleIn

        d = dict(src_dict)
        auto_resolve_duration = d.pop("auto_resolve_duration", UNSET)

        exit_stable_limit = d.pop("exit_stable_limit", UNSET)

        peak_hold_duration = d.pop("peak_hold_duration", UNSET)

        _rules = d.pop("rules", UNSET)
        rules: list[MetricRuleIn] | Unset = UNSET
        if _rules is not UNSET:
            rules = []
            for rules_item_data in _rules:
                rules_item = MetricRuleIn.from_dict(rules_item_data)

                rules.append(rules_item)

        _status = d.pop("status", UNSET)
        status: ControlPolicyProfileStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = ControlPolicyProfileStatus(_status)

        _type_ = d.pop("type", UNSET)
        type_: ControlPolicyProfileType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = ControlPolicyProfileType(_type_)

        control_policy_profile = cls(
            auto_resolve_duration=auto_resolve_duration,
            exit_stable_limit=exit_stable_limit,
            peak_hold_duration=peak_hold_duration,
            rules=rules,
            status=status,
            type_=type_,
        )

        return control_policy_profile
