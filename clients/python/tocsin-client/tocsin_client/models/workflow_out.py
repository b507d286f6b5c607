from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.workflow_out_mode import WorkflowOutMode
from ..models.workflow_out_status import WorkflowOutStatus

if TYPE_CHECKING:
    from ..models.workflow_out_actions_item import WorkflowOutActionsItem
    from ..models.workflow_out_filter_type_0 import WorkflowOutFilterType0


T = TypeVar("T", bound="WorkflowOut")


@_attrs_define
class WorkflowOut:
    """
    Attributes:
        actions (list[WorkflowOutActionsItem]): as given (see WorkflowIn); a webhook secret only as its first
            characters, except the one the server generated, shown once in the answer to the create
        created_at (datetime.datetime):
        filter_ (None | WorkflowOutFilterType0):
        id (str):
        mode (WorkflowOutMode):
        name (str):
        organization_id (str):
        sites (list[str] | None):
        status (WorkflowOutStatus):
        topic_id (None | str): null: detached, the organization owning the shared topic deleted it (the workflow is
            INACTIVE; a PATCH giving a topic attaches it again)
        topic_organization_id (None | str):
    """

    actions: list[WorkflowOutActionsItem]
    created_at: datetime.datetime
    filter_: None | WorkflowOutFilterType0
    id: str
    mode: WorkflowOutMode
    name: str
    organization_id: str
    sites: list[str] | None
    status: WorkflowOutStatus
    topic_id: None | str
    topic_organization_id: None | str

    def to_dict(self) -> dict[str, Any]:
        from ..models.workflow_out_filter_type_0 import WorkflowOutFilterType0

        actions = []
        for actions_item_data in self.actions:
            actions_item = actions_item_data.to_dict()
            actions.append(actions_item)

        created_at = self.created_at.isoformat()

        filter_: dict[str, Any] | None
        if isinstance(self.filter_, WorkflowOutFilterType0):
            filter_ = self.filter_.to_dict()
        else:
            filter_ = self.filter_

        id = self.id

        mode = self.mode.value

        name = self.name

        organization_id = self.organization_id

        sites: list[str] | None
        if isinstance(self.sites, list):
            sites = self.sites

        else:
            sites = self.sites

        status = self.status.value

        topic_id: None | str
        topic_id = self.topic_id

        topic_organization_id: None | str
        topic_organization_id = self.topic_organization_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "actions": actions,
                "created_at": created_at,
                "filter": filter_,
                "id": id,
                "mode": mode,
                "name": name,
                "organization_id": organization_id,
                "sites": sites,
                "status": status,
                "topic_id": topic_id,
                "topic_organization_id": topic_organization_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.workflow_out_actions_item import WorkflowOutActionsItem
        from ..models.workflow_out_filter_type_0 import WorkflowOutFilterType0

        d = dict(src_dict)
        actions = []
        _actions = d.pop("actions")
        for actions_item_data in _actions:
            actions_item = WorkflowOutActionsItem.from_dict(actions_item_data)

            actions.append(actions_item)

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_filter_(data: object) -> None | WorkflowOutFilterType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                filter_type_0 = WorkflowOutFilterType0.from_dict(data)

                return filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | WorkflowOutFilterType0, data)

        filter_ = _parse_filter_(d.pop("filter"))

        id = d.pop("id")

        mode = WorkflowOutMode(d.pop("mode"))

        name = d.pop("name")

        organization_id = d.pop("organization_id")

        def _parse_sites(data: object) -> list[str] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sites_type_0 = cast(list[str], data)

                return sites_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None, data)

        sites = _parse_sites(d.pop("sites"))

        status = WorkflowOutStatus(d.pop("status"))

        def _parse_topic_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        topic_id = _parse_topic_id(d.pop("topic_id"))

        def _parse_topic_organization_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        topic_organization_id = _parse_topic_organization_id(
            d.pop("topic_organization_id")
        )

        workflow_out = cls(
            actions=actions,
            created_at=created_at,
            filter_=filter_,
            id=id,
            mode=mode,
            name=name,
            organization_id=organization_id,
            sites=sites,
            status=status,
            topic_id=topic_id,
            topic_organization_id=topic_organization_id,
        )

        return workflow_out
