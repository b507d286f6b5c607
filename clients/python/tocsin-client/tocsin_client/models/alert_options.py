from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.notification_text import NotificationText


T = TypeVar("T", bound="AlertOptions")


@_attrs_define
class AlertOptions:
    """
    Attributes:
        collapse_id (None | str | Unset):
        notification (None | NotificationText | Unset):
        thread_id (None | str | Unset):
        time_to_live (float | None | Unset):
    """

    collapse_id: None | str | Unset = UNSET
    notification: None | NotificationText | Unset = UNSET
    thread_id: None | str | Unset = UNSET
    time_to_live: float | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.notification_text import NotificationText

        collapse_id: None | str | Unset
        if isinstance(self.collapse_id, Unset):
            collapse_id = UNSET
        else:
            collapse_id = self.collapse_id

        notification: dict[str, Any] | None | Unset
        if isinstance(self.notification, Unset):
            notification = UNSET
        elif isinstance(self.notification, NotificationText):
            notification = self.notification.to_dict()
        else:
            notification = self.notification

        thread_id: None | str | Unset
        if isinstance(self.thread_id, Unset):
            thread_id = UNSET
        else:
            thread_id = self.thread_id

        time_to_live: float | None | Unset
        if isinstance(self.time_to_live, Unset):
            time_to_live = UNSET
        else:
            time_to_live = self.time_to_live

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if collapse_id is not UNSET:
            field_dict["collapse_id"] = collapse_id
        if notification is not UNSET:
            field_dict["notification"] = notification
        if thread_id is not UNSET:
            field_dict["thread_id"] = thread_id
        if time_to_live is not UNSET:
            field_dict["time_to_live"] = time_to_live

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.notification_text import NotificationText

        d = dict(src_dict)

        def _parse_collapse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        collapse_id = _parse_collapse_id(d.pop("collapse_id", UNSET))

        def _parse_notification(data: object) -> None | NotificationText | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                notification_type_0 = NotificationText.from_dict(data)

                return notification_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | NotificationText | Unset, data)

        notification = _parse_notification(d.pop("notification", UNSET))

        def _parse_thread_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        thread_id = _parse_thread_id(d.pop("thread_id", UNSET))

        def _parse_time_to_live(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        time_to_live = _parse_time_to_live(d.pop("time_to_live", UNSET))

        alert_options = cls(
            collapse_id=collapse_id,
            notification=notification,
            thread_id=thread_id,
            time_to_live=time_to_live,
        )

        return alert_options
