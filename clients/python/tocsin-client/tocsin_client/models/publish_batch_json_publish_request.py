from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.publish_status import PublishStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attributes import Attributes
    from ..models.event_control import EventControl
    from ..models.event_info import EventInfo
    from ..models.notification_object import NotificationObject
    from ..models.publish_batch_json_publish_request_data import (
        PublishBatchJsonPublishRequestData,
    )


T = TypeVar("T", bound="PublishBatchJsonPublishRequest")


@_attrs_define
class PublishBatchJsonPublishRequest:
    """The body of ``POST .../workflow_topics/{topic}/publish``.

    Attributes:
        data (PublishBatchJsonPublishRequestData):
        status (PublishStatus):
        attributes (Attributes | None | Unset):
        event (EventInfo | None | Unset):
        event_control (EventControl | None | Unset):
        notification (None | NotificationObject | Unset):
    """

    data: PublishBatchJsonPublishRequestData
    status: PublishStatus
    attributes: Attributes | None | Unset = UNSET
    event: EventInfo | None | Unset = UNSET
    event_control: EventControl | None | Unset = UNSET
    notification: None | NotificationObject | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.attributes import Attributes
        from ..models.event_control import EventControl
        from ..models.event_info import EventInfo
        from ..models.notification_object import NotificationObject

        data = self.data.to_dict()

        status = self.status.value

        attributes: dict[str, Any] | None | Unset
        if isinstance(self.attributes, Unset):
            attributes = UNSET
        elif isinstance(self.attributes, Attributes):
            attributes = self.attributes.to_dict()
        else:
            attributes = self.attributes

        event: dict[str, Any] | None | Unset
        if isinstance(self.event, Unset):
            event = UNSET
        elif isinstance(self.event, EventInfo):
            event = self.event.to_dict()
        else:
            event = self.event

        event_control: dict[str, Any] | None | Unset
        if isinstance(self.event_control, Unset):
            event_control = UNSET
        elif isinstance(self.event_control, EventControl):
            event_control = self.event_control.to_dict()
        else:
            event_control = self.event_control

        notification: dict[str, Any] | None | Unset
        if isinstance(self.notification, Unset):
            notification = UNSET
        elif isinstance(self.notification, NotificationObject):
            notification = self.notification.to_dict()
        else:
            notification = self.notification

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "data": data,
                "status": status,
            }
        )
        if attributes is not UNSET:
            field_dict["attributes"] = attributes
        if event is not UNSET:
            field_dict["event"] = event
        if event_control is not UNSET:
            field_dict["event_control"] = event_control
        if notification is not UNSET:
            field_dict["notification"] = notification

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.attributes import Attributes
        from ..models.event_control import EventControl
        from ..models.event_info import EventInfo
        from ..models.notification_object import NotificationObject
        from ..models.publish_batch_json_publish_request_data import (
            PublishBatchJsonPublishRequestData,
        )

        d = dict(src_dict)
        data = PublishBatchJsonPublishRequestData.from_dict(d.pop("data"))

        status = PublishStatus(d.pop("status"))

        def _parse_attributes(data: object) -> Attributes | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                attributes_type_0 = Attributes.from_dict(data)

                return attributes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Attributes | None | Unset, data)

        attributes = _parse_attributes(d.pop("attributes", UNSET))

        def _parse_event(data: object) -> EventInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                event_type_0 = EventInfo.from_dict(data)

                return event_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventInfo | None | Unset, data)

        event = _parse_event(d.pop("event", UNSET))

        def _parse_event_control(data: object) -> EventControl | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                event_control_type_0 = EventControl.from_dict(data)

                return event_control_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventControl | None | Unset, data)

        event_control = _parse_event_control(d.pop("event_control", UNSET))

        def _parse_notification(data: object) -> None | NotificationObject | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                notification_type_0 = NotificationObject.from_dict(data)

                return notification_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | NotificationObject | Unset, data)

        notification = _parse_notification(d.pop("notification", UNSET))

        publish_batch_json_publish_request = cls(
            data=data,
            status=status,
            attributes=attributes,
            event=event,
            event_control=event_control,
            notification=notification,
        )

        return publish_batch_json_publish_request
