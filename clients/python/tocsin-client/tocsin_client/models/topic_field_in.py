from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.field_value_in import FieldValueIn


T = TypeVar("T", bound="TopicFieldIn")


@_attrs_define
class TopicFieldIn:
    """
    Attributes:
        id (str):
        path (str):
        description_en (str | Unset):  Default: ''.
        description_ja (str | Unset):  Default: ''.
        name_en (str | Unset):  Default: ''.
        name_ja (str | Unset):  Default: ''.
        site (bool | Unset):  Default: False.
        values (list[FieldValueIn] | Unset):
    """

    id: str
    path: str
    description_en: str | Unset = ""
    description_ja: str | Unset = ""
    name_en: str | Unset = ""
    name_ja: str | Unset = ""
    site: bool | Unset = False
    values: list[FieldValueIn] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        path = self.path

        description_en = self.description_en

        description_ja = self.description_ja

        name_en = self.name_en

        name_ja = self.name_ja

        site = self.site

        values: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.values, Unset):
            values = []
            for values_item_data in self.values:
                values_item = values_item_data.to_dict()
                values.append(values_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "path": path,
            }
        )
        if description_en is not UNSET:
            field_dict["description_en"] = description_en
        if description_ja is not UNSET:
            field_dict["description_ja"] = description_ja
        if name_en is not UNSET:
            field_dict["name_en"] = name_en
        if name_ja is not UNSET:
            field_dict["name_ja"] = name_ja
        if site is not UNSET:
            field_dict["site"] = site
        if values is not UNSET:
            field_dict["values"] = values

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.field_value_in import FieldValueIn

        d = dict(src_dict)
        id = d.pop("id")

        path = d.pop("path")

        description_en = d.pop("description_en", UNSET)

        description_ja = d.pop("description_ja", UNSET)

        name_en = d.pop("name_en", UNSET)

        name_ja = d.pop("name_ja", UNSET)

        site = d.pop("site", UNSET)

        _values = d.pop("values", UNSET)
        values: list[FieldValueIn] | Unset = UNSET
        if _values is not UNSET:
            values = []
            for values_item_data in _values:
                values_item = FieldValueIn.from_dict(values_item_data)

                values.append(values_item)

        topic_field_in = cls(
            id=id,
            path=path,
            description_en=description_en,
            description_ja=description_ja,
            name_en=name_en,
            name_ja=name_ja,
            site=site,
            values=values,
        )

        return topic_field_in
