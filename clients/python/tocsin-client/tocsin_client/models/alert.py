from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.alert_options import AlertOptions


T = TypeVar("T", bound="Alert")


@_attrs_define
class Alert:
    """
    Attributes:
        options (AlertOptions | None | Unset):
    """

    options: AlertOptions | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.alert_options import AlertOptions

        options: dict[str, Any] | None | Unset
        if isinstance(self.options, Unset):
            options = UNSET
        elif isinstance(self.options, AlertOptions):
            options = self.options.to_dict()
        else:
            options = self.options

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if options is not UNSET:
            field_dict["options"] = options

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.alert_options import AlertOptions

        d = dict(src_dict)

        def _parse_options(data: object) -> AlertOptions | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                options_type_0 = AlertOptions.from_dict(data)

                return options_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AlertOptions | None | Unset, data)

        options = _parse_options(d.pop("options", UNSET))

        alert = cls(
            options=options,
        )

        return alert
