from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.grant_out import GrantOut


T = TypeVar("T", bound="CheckOut")


@_attrs_define
class CheckOut:
    """
    Attributes:
        allowed (bool):
        granted_by (GrantOut | None):
    """

    allowed: bool
    granted_by: GrantOut | None

    def to_dict(self) -> dict[str, Any]:
        from ..models.grant_out import GrantOut

        allowed = self.allowed

        granted_by: dict[str, Any] | None
        if isinstance(self.granted_by, GrantOut):
            granted_by = self.granted_by.to_dict()
        else:
            granted_by = self.granted_by

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "allowed": allowed,
                "granted_by": granted_by,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.grant_out import GrantOut

        d = dict(src_dict)
        allowed = d.pop("allowed")

        def _parse_granted_by(data: object) -> GrantOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                granted_by_type_0 = GrantOut.from_dict(data)

                return granted_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(GrantOut | None, data)

        granted_by = _parse_granted_by(d.pop("granted_by"))

        check_out = cls(
            allowed=allowed,
            granted_by=granted_by,
        )

        return check_out
