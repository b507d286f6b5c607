from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.check_subject_kind import CheckSubjectKind

T = TypeVar("T", bound="CheckSubject")


@_attrs_define
class CheckSubject:
    """
    Attributes:
        id (str):
        kind (CheckSubjectKind):
    """

    id: str
    kind: CheckSubjectKind

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "kind": kind,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        kind = CheckSubjectKind(d.pop("kind"))

        check_subject = cls(
            id=id,
            kind=kind,
        )

        return check_subject
