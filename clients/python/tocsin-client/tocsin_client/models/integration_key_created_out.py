from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="IntegrationKeyCreatedOut")


@_attrs_define
class IntegrationKeyCreatedOut:
    """
    Attributes:
        created_at (datetime.datetime):
        id (str):
        name (str):
        routing_key (str): the Events v2 routing_key; returned only here, stored hashed
        topic_id (str):
    """

    created_at: datetime.datetime
    id: str
    name: str
    routing_key: str
    topic_id: str

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        id = self.id

        name = self.name

        routing_key = self.routing_key

        topic_id = self.topic_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "name": name,
                "routing_key": routing_key,
                "topic_id": topic_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        id = d.pop("id")

        name = d.pop("name")

        routing_key = d.pop("routing_key")

        topic_id = d.pop("topic_id")

        integration_key_created_out = cls(
            created_at=created_at,
            id=id,
            name=name,
            routing_key=routing_key,
            topic_id=topic_id,
        )

        return integration_key_created_out
