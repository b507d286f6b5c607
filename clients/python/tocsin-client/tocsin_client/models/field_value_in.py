from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.field_value_in_type import FieldValueInType
from ..types import UNSET, Unset

T = TypeVar("T", bound="FieldValueIn")


@_attrs_define
class FieldValueIn:
    """A ``values`` entry as a create or update sends it: only the field operators, each for a type
    that allows it (type ``any`` takes every operator; docs/api.md, "Topic field operators").

        Attributes:
            type_ (FieldValueInType):
            operators (list[str] | Unset):
            value_source (str | Unset):  Default: 'value'.
    """

    type_: FieldValueInType
    operators: list[str] | Unset = UNSET
    value_source: str | Unset = "value"

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        operators: list[str] | Unset = UNSET
        if not isinstance(self.operators, Unset):
            operators = self.operators

        value_source = self.value_source

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
            }
        )
        if operators is not UNSET:
            field_dict["operators"] = operators
        if value_source is not UNSET:
            field_dict["value_source"] = value_source

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = FieldValueInType(d.pop("type"))

        operators = cast(list[str], d.pop("operators", UNSET))

        value_source = d.pop("value_source", UNSET)

        field_value_in = cls(
            type_=type_,
            operators=operators,
            value_source=value_source,
        )

        return field_value_in
