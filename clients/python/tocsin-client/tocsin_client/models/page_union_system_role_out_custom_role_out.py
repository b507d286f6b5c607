from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.custom_role_out import CustomRoleOut
    from ..models.system_role_out import SystemRoleOut


T = TypeVar("T", bound="PageUnionSystemRoleOutCustomRoleOut")


@_attrs_define
class PageUnionSystemRoleOutCustomRoleOut:
    """
    Attributes:
        items (list[CustomRoleOut | SystemRoleOut]):
        next_cursor (None | str):
    """

    items: list[CustomRoleOut | SystemRoleOut]
    next_cursor: None | str

    def to_dict(self) -> dict[str, Any]:
        from ..models.system_role_out import SystemRoleOut

        items = []
        for items_item_data in self.items:
            items_item: dict[str, Any]
            if isinstance(items_item_data, SystemRoleOut):
                items_item = items_item_data.to_dict()
            else:
                items_item = items_item_data.to_dict()

            items.append(items_item)

        next_cursor: None | str
        next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "items": items,
                "next_cursor": next_cursor,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.custom_role_out import CustomRoleOut
        from ..models.system_role_out import SystemRoleOut

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:

            def _parse_items_item(data: object) -> CustomRoleOut | SystemRoleOut:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    items_item_type_0 = SystemRoleOut.from_dict(data)

                    return items_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                items_item_type_1 = CustomRoleOut.from_dict(data)

                return items_item_type_1

            items_item = _parse_items_item(items_item_data)

            items.append(items_item)

        def _parse_next_cursor(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        next_cursor = _parse_next_cursor(d.pop("next_cursor"))

        page_union_system_role_out_custom_role_out = cls(
            items=items,
            next_cursor=next_cursor,
        )

        return page_union_system_role_out_custom_role_out
