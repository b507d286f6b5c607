"""The notification object (a publish's ``notification``), validated strictly: strict JSON types,
no unknown keys except inside ``data``. Used by the publish body
(app/domain/events/publish.py) and read by the push mapping (app/domain/delivery/push.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field

from app.domain.shared.strict_model import FrozenStrictModel

DEFAULT_LANG = "ja"
DEFAULT_SOUND = "default"
MAX_TITLE_CHARS = 256
MAX_BODY_CHARS = 4096  # APNs and FCM take 4 KB payloads: a longer body could never be sent
MAX_ID_CHARS = 256
MAX_SOUND_NAME_CHARS = 256
MAX_LANG_CHARS = 35


def _zero_or_one(value: Any) -> Any:
    """``critical`` is a JSON number equal to 0 or 1 (``1.0`` included; booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value not in (0, 1):
        raise ValueError("critical must be the number 0 or 1")
    return int(value)


class _Finite(FrozenStrictModel):
    model_config = ConfigDict(allow_inf_nan=False)


class SoundObject(_Finite):
    """``alert.options.notification.sound`` given as an object."""

    critical: Annotated[Literal[0, 1], BeforeValidator(_zero_or_one)] = 0
    name: str = Field(default=DEFAULT_SOUND, min_length=1, max_length=MAX_SOUND_NAME_CHARS)
    volume: float = Field(default=1.0, ge=0.0, le=1.0)


class NotificationText(_Finite):
    """``alert.options.notification``: what the push says."""

    title: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    body: str | None = Field(default=None, max_length=MAX_BODY_CHARS)
    sound: Annotated[str, Field(min_length=1, max_length=MAX_SOUND_NAME_CHARS)] | SoundObject | None = None


class AlertOptions(_Finite):
    notification: NotificationText | None = None
    thread_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID_CHARS)
    collapse_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID_CHARS)
    time_to_live: float | None = Field(default=None, ge=0)


class Alert(_Finite):
    options: AlertOptions | None = None


class NotificationObject(_Finite):
    """The notification object (the publish's ``notification``): strict JSON types, no
    unknown keys except inside ``data`` (any object); ``null`` is the same as absent."""

    lang: str = Field(default=DEFAULT_LANG, min_length=1, max_length=MAX_LANG_CHARS)
    data: dict[str, Any] | None = None
    alert: Alert | None = None
