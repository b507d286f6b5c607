from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.workflow_patch_mode import WorkflowPatchMode
from ..models.workflow_patch_status import WorkflowPatchStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.run_operation_book import RunOperationBook
    from ..models.send_email import SendEmail
    from ..models.send_push import SendPush
    from ..models.send_webhook import SendWebhook
    from ..models.workflow_patch_filter_type_0 import WorkflowPatchFilterType0


T = TypeVar("T", bound="WorkflowPatch")


@_attrs_define
class WorkflowPatch:
    """
    Attributes:
        actions (list[RunOperationBook | SendEmail | SendPush | SendWebhook] | Unset):
        filter_ (None | Unset | WorkflowPatchFilterType0):
        mode (WorkflowPatchMode | Unset):
        name (str | Unset):
        sites (list[str] | None | Unset):
        status (WorkflowPatchStatus | Unset):
        topic (str | Unset):
    """

    actions: list[RunOperationBook | SendEmail | SendPush | SendWebhook] | Unset = UNSET
    filter_: None | Unset | WorkflowPatchFilterType0 = UNSET
    mode: WorkflowPatchMode | Unset = UNSET
    name: str | Unset = UNSET
    sites: list[str] | None | Unset = UNSET
    status: WorkflowPatchStatus | Unset = UNSET
    topic: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_operation_book import RunOperationBook
        from ..models.send_email import SendEmail
        from ..models.send_push import SendPush
        from ..models.workflow_patch_filter_type_0 import WorkflowPatchFilterType0

        actions: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.actions, Unset):
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

        filter_: dict[str, Any] | None | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        elif isinstance(self.filter_, WorkflowPatchFilterType0):
            filter_ = self.filter_.to_dict()
        else:
            filter_ = self.filter_

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value

        name = self.name

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

        topic = self.topic

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if actions is not UNSET:
            field_dict["actions"] = actions
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if mode is not UNSET:
            field_dict["mode"] = mode
        if name is not UNSET:
            field_dict["name"] = name
        if sites is not UNSET:
            field_dict["sites"] = sites
        if status is not UNSET:
            field_dict["status"] = status
        if topic is not UNSET:
            field_dict["topic"] = topic

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_operation_book import RunOperationBook
        from ..models.send_email import SendEmail
        from ..models.send_push import SendPush
        from ..models.send_webhook import SendWebhook
        from ..models.workflow_patch_filter_type_0 import WorkflowPatchFilterType0

        d = dict(src_dict)
        _actions = d.pop("actions", UNSET)
        actions: list[RunOperationBook | SendEmail | SendPush | SendWebhook] | Unset = (
            UNSET
        )
        if _actions is not UNSET:
            actions = []
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

        def _parse_filter_(data: object) -> None | Unset | WorkflowPatchFilterType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                filter_type_0 = WorkflowPatchFilterType0.from_dict(data)

                return filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WorkflowPatchFilterType0, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        _mode = d.pop("mode", UNSET)
        mode: WorkflowPatchMode | Unset
        if isinstance(_mode, Unset):
            mode = UNSET
        else:
            mode = WorkflowPatchMode(_mode)

        name = d.pop("name", UNSET)

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
        status: WorkflowPatchStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = WorkflowPatchStatus(_status)

        topic = d.pop("topic", UNSET)

        workflow_patch = cls(
            actions=actions,
            filter_=filter_,
            mode=mode,
            name=name,
            sites=sites,
            status=status,
            topic=topic,
        )

        return workflow_patch
