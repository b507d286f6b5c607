from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.check_subject import CheckSubject


T = TypeVar("T", bound="CheckIn")


@_attrs_define
class CheckIn:
    """
    Attributes:
        permission (str):
        principal (CheckSubject):
        resource (str):
    """

    permission: str
    principal: CheckSubject
    resource: str

    def to_dict(self) -> dict[str, Any]:
        permission = self.permission

        principal = self.principal.to_dict()

        resource = self.resource

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "permission": permission,
                "principal": principal,
                "resource": resource,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.check_subject import CheckSubject

        d = dict(src_dict)
        permission = d.pop("permission")

        principal = CheckSubject.from_dict(d.pop("principal"))

        resource = d.pop("resource")

        check_in = cls(
            permission=permission,
            principal=principal,
            resource=resource,
        )

        return check_in
