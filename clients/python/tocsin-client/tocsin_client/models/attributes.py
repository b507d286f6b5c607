from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Attributes")


@_attrs_define
class Attributes:
    """
    Attributes:
        idempotency_key (None | str | Unset):
        target_organization_ids (list[str] | None | Unset):
    """

    idempotency_key: None | str | Unset = UNSET
    target_organization_ids: list[str] | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        idempotency_key: None | str | Unset
        if isinstance(self.idempotency_key, Unset):
            idempotency_key = UNSET
        else:
            idempotency_key = self.idempotency_key

        target_organization_ids: list[str] | None | Unset
        if isinstance(self.target_organization_ids, Unset):
            target_organization_ids = UNSET
        elif isinstance(self.target_organization_ids, list):
            target_organization_ids = self.target_organization_ids

        else:
            target_organization_ids = self.target_organization_ids

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key
        if target_organization_ids is not UNSET:
            field_dict["target_organization_ids"] = target_organization_ids

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_idempotency_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        idempotency_key = _parse_idempotency_key(d.pop("idempotency_key", UNSET))

        def _parse_target_organization_ids(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                target_organization_ids_type_0 = cast(list[str], data)

                return target_organization_ids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        target_organization_ids = _parse_target_organization_ids(
            d.pop("target_organization_ids", UNSET)
        )

        attributes = cls(
            idempotency_key=idempotency_key,
            target_organization_ids=target_organization_ids,
        )

        return attributes
