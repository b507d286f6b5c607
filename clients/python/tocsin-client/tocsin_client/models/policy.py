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

T = TypeVar("T", bound="Policy")


@_attrs_define
class Policy:
    """
    Attributes:
        effect (Literal['allow']):
        permission_id (str):
        description (str | Unset):  Default: ''.
    """

    effect: Literal["allow"]
    permission_id: str
    description: str | Unset = ""

    def to_dict(self) -> dict[str, Any]:
        effect = self.effect

        permission_id = self.permission_id

        description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "effect": effect,
                "permission_id": permission_id,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        effect = cast(Literal["allow"], d.pop("effect"))
        if effect != "allow":
            raise ValueError(f"effect must match const 'allow', got '{effect}'")

        permission_id = d.pop("permission_id")

        description = d.pop("description", UNSET)

        policy = cls(
            effect=effect,
            permission_id=permission_id,
            description=description,
        )

        return policy
