from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.workflow_in_mode import WorkflowInMode
from ..models.workflow_in_status import WorkflowInStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.run_operation_book import RunOperationBook
    from ..models.send_email import SendEmail
    from ..models.send_push import SendPush
    from ..models.send_webhook import SendWebhook
    from ..models.workflow_in_filter_type_0 import WorkflowInFilterType0


T = TypeVar("T", bound="WorkflowIn")


@_attrs_define
class WorkflowIn:
    """
    Attributes:
        actions (list[RunOperationBook | SendEmail | SendPush | SendWebhook]):
        mode (WorkflowInMode):
        name (str):
        topic (str):
        filter_ (None | Unset | WorkflowInFilterType0):
        sites (list[str] | None | Unset):
        status (WorkflowInStatus | Unset):  Default: WorkflowInStatus.ACTIVE.
        topic_organization_id (None | str | Unset):
    """

    actions: list[RunOperationBook | SendEmail | SendPush | SendWebhook]
    mode: WorkflowInMode
    name: str
    topic: str
    filter_: None | Unset | WorkflowInFilterType0 = UNSET
    sites: list[str] | None | Unset = UNSET
    status: WorkflowInStatus | Unset = WorkflowInStatus.ACTIVE
    topic_organization_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_operation_book import RunOperationBook
        from ..models.send_email import SendEmail
        from ..models.send_push import SendPush
        from ..models.workflow_in_filter_type_0 import WorkflowInFilterType0

        actions = []
        for actions_item_data in self.actions:
            actions_item: dict[str, Any]
            if (
                isinstance(actions_item_data, RunOperationBook)
                or isinstance(actions_item_data, SendPush)
                or isinstance(actions_item_data, SendEmail)
            ):
                actions_item = actions_item_data.to_dict()
            else:
                actions_item = actions_item_data.to_dict()

            actions.append(actions_item)

        mode = self.mode.value

        name = self.name

        topic = self.topic

        filter_: dict[str, Any] | None | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        elif isinstance(self.filter_, WorkflowInFilterType0):
            filter_ = self.filter_.to_dict()
        else:
            filter_ = self.filter_

        sites: list[str] | None | Unset
        if isinstance(self.sites, Unset):
            sites = UNSET
        elif isinstance(self.sites, list):
            sites = self.sites

        else:
            sites = self.sites

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        topic_organization_id: None | str | Unset
        if isinstance(self.topic_organization_id, Unset):
            topic_organization_id = UNSET
        else:
            topic_organization_id = self.topic_organization_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "actions": actions,
                "mode": mode,
                "name": name,
                "topic": topic,
            }
        )
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if sites is not UNSET:
            field_dict["sites"] = sites
        if status is not UNSET:
            field_dict["status"] = status
        if topic_organization_id is not UNSET:
            field_dict["topic_organization_id"] = topic_organization_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_operation_book import RunOperationBook
        from ..models.send_email import SendEmail
        from ..models.send_push import SendPush
        from ..models.send_webhook import SendWebhook
        from ..models.workflow_in_filter_type_0 import WorkflowInFilterType0

        d = dict(src_dict)
        actions = []
        _actions = d.pop("actions")
        for actions_item_data in _actions:

            def _parse_actions_item(
                data: object,
            ) -> RunOperationBook | SendEmail | SendPush | SendWebhook:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    actions_item_type_0 = RunOperationBook.from_dict(data)

                    return actions_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    actions_item_type_1 = SendPush.from_dict(data)

                    return actions_item_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    actions_item_type_2 = SendEmail.from_dict(data)

                    return actions_item_type_2
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                actions_item_type_3 = SendWebhook.from_dict(data)

                return actions_item_type_3

            actions_item = _parse_actions_item(actions_item_data)

            actions.append(actions_item)

        mode = WorkflowInMode(d.pop("mode"))

        name = d.pop("name")

        topic = d.pop("topic")

        def _parse_filter_(data: object) -> None | Unset | WorkflowInFilterType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                filter_type_0 = WorkflowInFilterType0.from_dict(data)

                return filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WorkflowInFilterType0, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        def _parse_sites(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sites_type_0 = cast(list[str], data)

                return sites_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        sites = _parse_sites(d.pop("sites", UNSET))

        _status = d.pop("status", UNSET)
        status: WorkflowInStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = WorkflowInStatus(_status)

        def _parse_topic_organization_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        topic_organization_id = _parse_topic_organization_id(
            d.pop("topic_organization_id", UNSET)
        )

        workflow_in = cls(
            actions=actions,
            mode=mode,
            name=name,
            topic=topic,
            filter_=filter_,
            sites=sites,
            status=status,
            topic_organization_id=topic_organization_id,
        )

        return workflow_in
