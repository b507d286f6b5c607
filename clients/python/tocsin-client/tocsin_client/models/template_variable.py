from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="TemplateVariable")


@_attrs_define
class TemplateVariable:
    """
    Attributes:
        name (str):
        path (str):
        description (str | Unset):  Default: ''.
    """

    name: str
    path: str
    description: str | Unset = ""

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        path = self.path

        description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "path": path,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        path = d.pop("path")

        description = d.pop("description", UNSET)

        template_variable = cls(
            name=name,
            path=path,
            description=description,
        )

        return template_variable
