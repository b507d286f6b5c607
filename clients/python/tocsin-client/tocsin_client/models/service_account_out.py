from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..models.service_account_out_status import ServiceAccountOutStatus

T = TypeVar("T", bound="ServiceAccountOut")


@_attrs_define
class ServiceAccountOut:
    """
    Attributes:
        created_at (datetime.datetime):
        description (str):
        id (str):
        kind (Literal['service_account']):
        name (str):
        organization_id (str):
        status (ServiceAccountOutStatus):
    """

    created_at: datetime.datetime
    description: str
    id: str
    kind: Literal["service_account"]
    name: str
    organization_id: str
    status: ServiceAccountOutStatus

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        description = self.description

        id = self.id

        kind = self.kind

        name = self.name

        organization_id = self.organization_id

        status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "description": description,
                "id": id,
                "kind": kind,
                "name": name,
                "organization_id": organization_id,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        description = d.pop("description")

        id = d.pop("id")

        kind = cast(Literal["service_account"], d.pop("kind"))
        if kind != "service_account":
            raise ValueError(f"kind must match const 'service_account', got '{kind}'")

        name = d.pop("name")

        organization_id = d.pop("organization_id")

        status = ServiceAccountOutStatus(d.pop("status"))

        service_account_out = cls(
            created_at=created_at,
            description=description,
            id=id,
            kind=kind,
            name=name,
            organization_id=organization_id,
            status=status,
        )

        return service_account_out
