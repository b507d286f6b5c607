from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.alert import Alert
    from ..models.notification_object_data_type_0 import NotificationObjectDataType0


T = TypeVar("T", bound="NotificationObject")


@_attrs_define
class NotificationObject:
    """The notification object (the publish's ``notification``): strict JSON types, no
    unknown keys except inside ``data`` (any object); ``null`` is the same as absent.

        Attributes:
            alert (Alert | None | Unset):
            data (None | NotificationObjectDataType0 | Unset):
            lang (str | Unset):  Default: 'ja'.
    """

    alert: Alert | None | Unset = UNSET
    data: None | NotificationObjectDataType0 | Unset = UNSET
    lang: str | Unset = "ja"

    def to_dict(self) -> dict[str, Any]:
        from ..models.alert import Alert
        from ..models.notification_object_data_type_0 import NotificationObjectDataType0

        alert: dict[str, Any] | None | Unset
        if isinstance(self.alert, Unset):
            alert = UNSET
        elif isinstance(self.alert, Alert):
            alert = self.alert.to_dict()
        else:
            alert = self.alert

        data: dict[str, Any] | None | Unset
        if isinstance(self.data, Unset):
            data = UNSET
        elif isinstance(self.data, NotificationObjectDataType0):
            data = self.data.to_dict()
        else:
            data = self.data

        lang = self.lang

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if alert is not UNSET:
            field_dict["alert"] = alert
        if data is not UNSET:
            field_dict["data"] = data
        if lang is not UNSET:
            field_dict["lang"] = lang

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.alert import Alert
        from ..models.notification_object_data_type_0 import NotificationObjectDataType0

        d = dict(src_dict)

        def _parse_alert(data: object) -> Alert | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                alert_type_0 = Alert.from_dict(data)

                return alert_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Alert | None | Unset, data)

        alert = _parse_alert(d.pop("alert", UNSET))

        def _parse_data(data: object) -> None | NotificationObjectDataType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                data_type_0 = NotificationObjectDataType0.from_dict(data)

                return data_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | NotificationObjectDataType0 | Unset, data)

        data = _parse_data(d.pop("data", UNSET))

        lang = d.pop("lang", UNSET)

        notification_object = cls(
            alert=alert,
            data=data,
            lang=lang,
        )

        return notification_object
