from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.control_state_out_policy_type import ControlStateOutPolicyType
from ..models.control_state_out_status import ControlStateOutStatus

if TYPE_CHECKING:
    from ..models.control_state_out_last_values import ControlStateOutLastValues
    from ..models.control_state_out_peak import ControlStateOutPeak


T = TypeVar("T", bound="ControlStateOut")


@_attrs_define
class ControlStateOut:
    """
    Attributes:
        auto_resolve_at (datetime.datetime | None):
        episode_open (bool):
        last_decision (None | str):
        last_values (ControlStateOutLastValues):
        partition_key (str):
        peak (ControlStateOutPeak):
        policy_type (ControlStateOutPolicyType):
        set_members (list[Any]):
        stable_count (int):
        status (ControlStateOutStatus):
        updated_at (datetime.datetime | None):
    """

    auto_resolve_at: datetime.datetime | None
    episode_open: bool
    last_decision: None | str
    last_values: ControlStateOutLastValues
    partition_key: str
    peak: ControlStateOutPeak
    policy_type: ControlStateOutPolicyType
    set_members: list[Any]
    stable_count: int
    status: ControlStateOutStatus
    updated_at: datetime.datetime | None

    def to_dict(self) -> dict[str, Any]:
        auto_resolve_at: None | str
        if isinstance(self.auto_resolve_at, datetime.datetime):
            auto_resolve_at = self.auto_resolve_at.isoformat()
        else:
            auto_resolve_at = self.auto_resolve_at

        episode_open = self.episode_open

        last_decision: None | str
        last_decision = self.last_decision

        last_values = self.last_values.to_dict()

        partition_key = self.partition_key

        peak = self.peak.to_dict()

        policy_type = self.policy_type.value

        set_members = self.set_members

        stable_count = self.stable_count

        status = self.status.value

        updated_at: None | str
        if isinstance(self.updated_at, datetime.datetime):
            updated_at = self.updated_at.isoformat()
        else:
            updated_at = self.updated_at

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "auto_resolve_at": auto_resolve_at,
                "episode_open": episode_open,
                "last_decision": last_decision,
                "last_values": last_values,
                "partition_key": partition_key,
                "peak": peak,
                "policy_type": policy_type,
                "set_members": set_members,
                "stable_count": stable_count,
                "status": status,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.control_state_out_last_values import ControlStateOutLastValues
        from ..models.control_state_out_peak import ControlStateOutPeak

        d = dict(src_dict)

        def _parse_auto_resolve_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                auto_resolve_at_type_0 = datetime.datetime.fromisoformat(data)

                return auto_resolve_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        auto_resolve_at = _parse_auto_resolve_at(d.pop("auto_resolve_at"))

        episode_open = d.pop("episode_open")

        def _parse_last_decision(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_decision = _parse_last_decision(d.pop("last_decision"))

        last_values = ControlStateOutLastValues.from_dict(d.pop("last_values"))

        partition_key = d.pop("partition_key")

        peak = ControlStateOutPeak.from_dict(d.pop("peak"))

        policy_type = ControlStateOutPolicyType(d.pop("policy_type"))

        set_members = cast(list[Any], d.pop("set_members"))

        stable_count = d.pop("stable_count")

        status = ControlStateOutStatus(d.pop("status"))

        def _parse_updated_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                updated_at_type_0 = datetime.datetime.fromisoformat(data)

                return updated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        updated_at = _parse_updated_at(d.pop("updated_at"))

        control_state_out = cls(
            auto_resolve_at=auto_resolve_at,
            episode_open=episode_open,
            last_decision=last_decision,
            last_values=last_values,
            partition_key=partition_key,
            peak=peak,
            policy_type=policy_type,
            set_members=set_members,
            stable_count=stable_count,
            status=status,
            updated_at=updated_at,
        )

        return control_state_out
