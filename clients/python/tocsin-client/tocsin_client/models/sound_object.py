from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.sound_object_critical import SoundObjectCritical
from ..types import UNSET, Unset

T = TypeVar("T", bound="SoundObject")


@_attrs_define
class SoundObject:
    """``alert.options.notification.sound`` given as an object.

    Attributes:
        critical (SoundObjectCritical | Unset):  Default: SoundObjectCritical.VALUE_0.
        name (str | Unset):  Default: 'default'.
        volume (float | Unset):  Default: 1.0.
    """

    critical: SoundObjectCritical | Unset = SoundObjectCritical.VALUE_0
    name: str | Unset = "default"
    volume: float | Unset = 1.0

    def to_dict(self) -> dict[str, Any]:
        critical: int | Unset = UNSET
        if not isinstance(self.critical, Unset):
            critical = self.critical.value

        name = self.name

        volume = self.volume

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if critical is not UNSET:
            field_dict["critical"] = critical
        if name is not UNSET:
            field_dict["name"] = name
        if volume is not UNSET:
            field_dict["volume"] = volume

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        _critical = d.pop("critical", UNSET)
        critical: SoundObjectCritical | Unset
        if isinstance(_critical, Unset):
            critical = UNSET
        else:
            critical = SoundObjectCritical(_critical)

        name = d.pop("name", UNSET)

        volume = d.pop("volume", UNSET)

        sound_object = cls(
            critical=critical,
            name=name,
            volume=volume,
        )

        return sound_object
