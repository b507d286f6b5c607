from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SendPush")


@_attrs_define
class SendPush:
    """
    Attributes:
        type_ (Literal['SEND_PUSH_NOTIFICATION']):
        group_ids (list[str] | Unset):
        user_ids (list[str] | Unset):
    """

    type_: Literal["SEND_PUSH_NOTIFICATION"]
    group_ids: list[str] | Unset = UNSET
    user_ids: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        group_ids: list[str] | Unset = UNSET
        if not isinstance(self.group_ids, Unset):
            group_ids = self.group_ids

        user_ids: list[str] | Unset = UNSET
        if not isinstance(self.user_ids, Unset):
            user_ids = self.user_ids

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
            }
        )
        if group_ids is not UNSET:
            field_dict["group_ids"] = group_ids
        if user_ids is not UNSET:
            field_dict["user_ids"] = user_ids

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = cast(Literal["SEND_PUSH_NOTIFICATION"], d.pop("type"))
        if type_ != "SEND_PUSH_NOTIFICATION":
            raise ValueError(
                f"type must match const 'SEND_PUSH_NOTIFICATION', got '{type_}'"
            )

        group_ids = cast(list[str], d.pop("group_ids", UNSET))

        user_ids = cast(list[str], d.pop("user_ids", UNSET))

        send_push = cls(
            type_=type_,
            group_ids=group_ids,
            user_ids=user_ids,
        )

        return send_push
