from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.sound_object import SoundObject


T = TypeVar("T", bound="NotificationText")


@_attrs_define
class NotificationText:
    """``alert.options.notification``: what the push says.

    Attributes:
        body (None | str | Unset):
        sound (None | SoundObject | str | Unset):
        title (None | str | Unset):
    """

    body: None | str | Unset = UNSET
    sound: None | SoundObject | str | Unset = UNSET
    title: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.sound_object import SoundObject

        body: None | str | Unset
        if isinstance(self.body, Unset):
            body = UNSET
        else:
            body = self.body

        sound: dict[str, Any] | None | str | Unset
        if isinstance(self.sound, Unset):
            sound = UNSET
        elif isinstance(self.sound, SoundObject):
            sound = self.sound.to_dict()
        else:
            sound = self.sound

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if body is not UNSET:
            field_dict["body"] = body
        if sound is not UNSET:
            field_dict["sound"] = sound
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.sound_object import SoundObject

        d = dict(src_dict)

        def _parse_body(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        body = _parse_body(d.pop("body", UNSET))

        def _parse_sound(data: object) -> None | SoundObject | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                sound_type_1 = SoundObject.from_dict(data)

                return sound_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SoundObject | str | Unset, data)

        sound = _parse_sound(d.pop("sound", UNSET))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        notification_text = cls(
            body=body,
            sound=sound,
            title=title,
        )

        return notification_text
