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

T = TypeVar("T", bound="PolicyOut")


@_attrs_define
class PolicyOut:
    """
    Attributes:
        description (str):
        effect (Literal['allow']):
        permission_id (str):
    """

    description: str
    effect: Literal["allow"]
    permission_id: str

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        effect = self.effect

        permission_id = self.permission_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "description": description,
                "effect": effect,
                "permission_id": permission_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        description = d.pop("description")

        effect = cast(Literal["allow"], d.pop("effect"))
        if effect != "allow":
            raise ValueError(f"effect must match const 'allow', got '{effect}'")

        permission_id = d.pop("permission_id")

        policy_out = cls(
            description=description,
            effect=effect,
            permission_id=permission_id,
        )

        return policy_out
