from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.ready_out_status import ReadyOutStatus

if TYPE_CHECKING:
    from ..models.ready_out_checks import ReadyOutChecks


T = TypeVar("T", bound="ReadyOut")


@_attrs_define
class ReadyOut:
    """
    Attributes:
        checks (ReadyOutChecks): database, broker, config_changes: "ok" or what is wrong
        status (ReadyOutStatus):
    """

    checks: ReadyOutChecks
    status: ReadyOutStatus

    def to_dict(self) -> dict[str, Any]:
        checks = self.checks.to_dict()

        status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "checks": checks,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ready_out_checks import ReadyOutChecks

        d = dict(src_dict)
        checks = ReadyOutChecks.from_dict(d.pop("checks"))

        status = ReadyOutStatus(d.pop("status"))

        ready_out = cls(
            checks=checks,
            status=status,
        )

        return ready_out
