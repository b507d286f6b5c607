from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.error_out_details import ErrorOutDetails


T = TypeVar("T", bound="ErrorOut")


@_attrs_define
class ErrorOut:
    """The API's error body: every refusal's ``code``, ``message`` and ``details`` (docs/reference/errors.md).

    Attributes:
        code (str):
        details (ErrorOutDetails):
        message (str):
    """

    code: str
    details: ErrorOutDetails
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        details = self.details.to_dict()

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "details": details,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.error_out_details import ErrorOutDetails

        d = dict(src_dict)
        code = d.pop("code")

        details = ErrorOutDetails.from_dict(d.pop("details"))

        message = d.pop("message")

        error_out = cls(
            code=code,
            details=details,
            message=message,
        )

        error_out.additional_properties = d
        return error_out

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
