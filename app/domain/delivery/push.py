"""Push notifications: what one push says (``PushContent``), built from a publish record and
the control decision, and its APNs and FCM HTTP v1 payloads. Pure: no I/O.

``push_content(record, topic_name, decision)`` → ``PushContent``; ``apns_request(c, now_s)``
→ ``{"headers", "payload"}`` for ``POST /3/device/<token>``; ``fcm_payload(c, now_s)`` → the
FCM HTTP v1 ``message`` object without its ``token``; ``expired`` / ``remaining_ttl`` decide
whether a push still goes out and with which provider TTL; ``NotificationObject`` validates the
publish's notification object. Where that object leaves it open, the choices are:

- content: the publish's ``notification`` object field by field; a missing or empty title
  falls back to ``event.name``, then to the topic's name; a missing or empty body to
  ``event.description``, then ``""``; ``lang`` to the notification's, then ``event.lang``, then
  ``ja``; ``data`` is the notification's custom data only (never the published event ``data``);
  a missing sound is the platform's default sound (an alert is heard; the spec has no silent
  push). Title and body are used verbatim: the publisher writes them with the data in hand, so
  they are not templates.
- stamps: ``[DRILL] `` / ``[TEST] `` (``MODE_STAMPS``) lead the title, then ``Resolved: ``
  (``RELEASE_PREFIX``) on a RESOLVE; a stamp or prefix the title already has is not repeated.
  Only NOTIFY and RESOLVE make a push; SUPPRESS (or anything else) is a ``ValueError``.
- ``critical`` is a critical alert when it equals 1 (the model only admits 0 and 1); the volume
  only matters to a critical alert (APNs), is checked to be within 0.0 to 1.0 and never clamped.
- APNs payload: ``aps`` {alert {title, body}, sound (the name, or the critical dictionary),
  ``interruption-level: "critical"`` with a critical sound, ``thread-id``}; next to ``aps``:
  ``data`` (``APNS_DATA_KEY``: the custom data as JSON, types kept) and the Tocsin keys
  ``tocsin_mode``, ``tocsin_lang``, ``tocsin_topic``, ``tocsin_release`` (bool) and
  ``tocsin_event_id`` (the Tocsin event id, when known).
- APNs headers: ``apns-priority: 10``, ``apns-push-type: alert``; ``apns-collapse-id`` (an id
  over APNs' 64-byte limit is replaced by its SHA-256 hex digest, 64 bytes, so equal ids still
  collapse); ``apns-expiration`` = floor(now + ttl) in unix seconds, ``"0"`` for a ttl of 0
  (APNs: deliver once, never store), and absent without ttl (APNs stores and retries).
- FCM: ``notification {title, body}``; ``data`` holds string values only: strings as they are,
  anything else JSON-encoded (compact, keys sorted: ``1`` → ``"1"``, ``true`` → ``"true"``,
  ``{"a": 1}`` → ``'{"a":1}'``), plus the Tocsin keys as strings (``tocsin_release``
  ``"true"``/``"false"``, ``tocsin_thread_id`` for Android-side grouping); a custom key named
  like a Tocsin key is overwritten by it. ``android {priority: HIGH, collapse_key, ttl: "<n>s"
  (capped at FCM's 4 weeks), notification {sound, tag (= collapse_id), notification_priority:
  PRIORITY_MAX for a critical alert}}`` — no ``channel_id`` (the app's default channel; a
  critical channel needs an app contract that does not exist yet); ``apns {headers, payload}``
  is exactly ``apns_request``, which carries the critical alert to iOS.
- TTL: counts from the publish's acceptance. ``expired`` is true once more than
  ``max(ttl, NOW_WINDOW_MS)`` has passed since acceptance: at the deadline itself the push still
  goes. A ttl of 0 ("deliver now or never") therefore goes out only when dispatched within
  ``NOW_WINDOW_MS`` of acceptance, and with a provider TTL of 0 (no storage, no retry); so does
  any ttl shorter than the window. No ttl never expires. ``remaining_ttl`` is what the
  providers should be given (``dataclasses.replace(c, time_to_live=remaining_ttl(...))``),
  so their deadline is the acceptance-based one.
- A non-finite ttl in a record (publish.py admits ``Infinity``) means no expiry.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from app.domain.events.control import ControlDecision
from app.domain.events.notification import (
    DEFAULT_LANG,
    DEFAULT_SOUND,
)
from app.domain.events.publish import PublishStatus

RELEASE_PREFIX = "Resolved: "
MODE_STAMPS: Mapping[PublishStatus, str] = MappingProxyType(
    {PublishStatus.ACTUAL: "", PublishStatus.DRILL: "[DRILL] ", PublishStatus.TEST: "[TEST] "}
)
APNS_DATA_KEY = "data"
APNS_COLLAPSE_ID_MAX_BYTES = 64
FCM_MAX_TTL_S = 2_419_200  # 4 weeks, FCM's maximum time to live
NOW_WINDOW_MS = 1_000  # "now" for a ttl of 0 (or below the window): dispatched this soon after acceptance


_PUSH_DECISIONS = (ControlDecision.NOTIFY, ControlDecision.RESOLVE)


# --- what one push says ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PushSound:
    """The sound of a push: its name, whether it is a critical alert, and its volume (0.0 to 1.0)."""

    name: str = DEFAULT_SOUND
    critical: bool = False
    volume: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("the sound name must be a non-empty string")
        if not isinstance(self.critical, bool):
            raise ValueError("critical must be a bool")
        if isinstance(self.volume, bool) or not isinstance(self.volume, int | float):
            raise ValueError("the volume must be a number")
        if not 0.0 <= self.volume <= 1.0:  # NaN fails too
            raise ValueError(f"the volume must be within 0.0 and 1.0, not {self.volume!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class PushContent:
    """What one push says, provider-neutral. ``data`` is a read-only copy (not hashed)."""

    title: str
    body: str
    lang: str = DEFAULT_LANG
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)
    sound: PushSound = field(default_factory=PushSound)
    thread_id: str | None = None
    collapse_id: str | None = None
    time_to_live: float | None = None
    mode: PublishStatus
    release: bool = False
    event_id: str | None = None
    topic: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", PublishStatus(self.mode))
        object.__setattr__(self, "data", MappingProxyType(copy.deepcopy(dict(self.data))))
        ttl = self.time_to_live
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 <= ttl < math.inf):
            raise ValueError(f"time_to_live must be a finite number of seconds >= 0, not {ttl!r}")


def push_content(record: Mapping[str, Any], topic_name: str, decision: str) -> PushContent:
    """The push of a decided publish record (``status``, ``event``, ``notification``, ``id``).

    A RESOLVE is a release notice; DRILL and TEST are stamped on the title. Raises
    ``ValueError`` for a decision that sends no push, an unknown status or a malformed field.
    """
    if decision not in _PUSH_DECISIONS:
        raise ValueError(f"decision {decision!r} sends no push")
    release = decision == ControlDecision.RESOLVE
    mode = PublishStatus(record["status"])
    event = _mapping(record.get("event"), "event")
    notification = _mapping(record.get("notification"), "notification")
    options = _mapping(_mapping(notification.get("alert"), "alert").get("options"), "alert.options")
    text = _mapping(options.get("notification"), "alert.options.notification")

    base_title = _text(text, "title") or _text(event, "name") or topic_name
    stamp = MODE_STAMPS[mode]
    if stamp and base_title.startswith(stamp):
        base_title = base_title[len(stamp) :]
    title = stamp + (_prefixed(RELEASE_PREFIX, base_title) if release else base_title)
    data = notification.get("data")
    if data is not None and not isinstance(data, Mapping):
        raise ValueError("notification.data must be an object")
    return PushContent(
        title=title,
        body=_text(text, "body") or _text(event, "description") or "",
        lang=_text(notification, "lang") or _text(event, "lang") or DEFAULT_LANG,
        data=data or {},
        sound=_sound(text.get("sound")),
        thread_id=_text(options, "thread_id") or None,
        collapse_id=_text(options, "collapse_id") or None,
        time_to_live=_ttl(options.get("time_to_live")),
        mode=mode,
        release=release,
        event_id=_text(record, "id") or None,
        topic=topic_name,
    )


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be an object")
    return value


def _text(container: Mapping[str, Any], key: str) -> str | None:
    value = container.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _prefixed(prefix: str, title: str) -> str:
    return title if title.startswith(prefix) else prefix + title


def _sound(value: Any) -> PushSound:
    if value is None:
        return PushSound()
    if isinstance(value, str):
        return PushSound(name=value or DEFAULT_SOUND)
    if isinstance(value, Mapping):
        critical = value.get("critical", 0)
        if isinstance(critical, bool) or not isinstance(critical, int | float):
            raise ValueError("sound.critical must be a number")
        return PushSound(
            name=_text(value, "name") or DEFAULT_SOUND,
            critical=critical == 1,
            volume=value.get("volume", 1.0),
        )
    raise ValueError("sound must be a string or an object")


def _ttl(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError(f"time_to_live must be a number of seconds >= 0, not {value!r}")
    return None if value == math.inf else float(value)


# --- provider payloads -------------------------------------------------------------------------


def apns_payload(c: PushContent) -> dict[str, Any]:
    """The APNs JSON payload: ``aps`` plus the custom data and the Tocsin keys next to it."""
    aps: dict[str, Any] = {"alert": {"title": c.title, "body": c.body}, "sound": _apns_sound(c.sound)}
    if c.sound.critical:
        aps["interruption-level"] = "critical"
    if c.thread_id is not None:
        aps["thread-id"] = c.thread_id
    payload: dict[str, Any] = {
        "aps": aps,
        APNS_DATA_KEY: copy.deepcopy(dict(c.data)),
        "tocsin_mode": c.mode.value,
        "tocsin_lang": c.lang,
        "tocsin_topic": c.topic,
        "tocsin_release": c.release,
    }
    if c.event_id is not None:
        payload["tocsin_event_id"] = c.event_id
    return payload


def _apns_sound(sound: PushSound) -> str | dict[str, Any]:
    if not sound.critical:
        return sound.name
    return {"critical": 1, "name": sound.name, "volume": float(sound.volume)}


def apns_headers(c: PushContent, now_s: float) -> dict[str, str]:
    """The APNs request headers of a push sent at ``now_s`` (unix seconds)."""
    headers = {"apns-priority": "10", "apns-push-type": "alert"}
    if c.collapse_id is not None:
        headers["apns-collapse-id"] = apns_collapse_id(c.collapse_id)
    if c.time_to_live is not None:
        expiration = 0 if c.time_to_live == 0 else max(1, math.floor(now_s + c.time_to_live))
        headers["apns-expiration"] = str(expiration)
    return headers


def apns_request(c: PushContent, now_s: float) -> dict[str, Any]:
    """``{"headers": …, "payload": …}`` of the APNs request for a push sent at ``now_s``."""
    return {"headers": apns_headers(c, now_s), "payload": apns_payload(c)}


def apns_collapse_id(collapse_id: str) -> str:
    """The id itself when it fits APNs' 64 bytes, else its SHA-256 hex digest (64 bytes)."""
    if len(collapse_id.encode()) <= APNS_COLLAPSE_ID_MAX_BYTES:
        return collapse_id
    return hashlib.sha256(collapse_id.encode()).hexdigest()


def fcm_payload(c: PushContent, now_s: float) -> dict[str, Any]:
    """The FCM HTTP v1 ``message`` (without ``token``) of a push sent at ``now_s``; ``now_s``
    only dates the ``apns-expiration`` of its iOS part."""
    data = {key: value if isinstance(value, str) else _json(value) for key, value in c.data.items()}
    data.update(
        tocsin_mode=c.mode.value,
        tocsin_lang=c.lang,
        tocsin_topic=c.topic,
        tocsin_release="true" if c.release else "false",
    )
    if c.event_id is not None:
        data["tocsin_event_id"] = c.event_id
    if c.thread_id is not None:
        data["tocsin_thread_id"] = c.thread_id
    android_notification: dict[str, Any] = {"sound": c.sound.name}
    android: dict[str, Any] = {"priority": "HIGH"}
    if c.collapse_id is not None:
        android["collapse_key"] = c.collapse_id
        android_notification["tag"] = c.collapse_id
    if c.sound.critical:
        android_notification["notification_priority"] = "PRIORITY_MAX"
    if c.time_to_live is not None:
        android["ttl"] = fcm_duration(min(c.time_to_live, FCM_MAX_TTL_S))
    android["notification"] = android_notification
    return {
        "notification": {"title": c.title, "body": c.body},
        "data": data,
        "android": android,
        "apns": apns_request(c, now_s),
    }


def fcm_duration(seconds: float) -> str:
    """A protobuf Duration as JSON: ``"60s"``, ``"2.5s"`` (at most 9 decimals)."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{seconds:.9f}".rstrip("0").rstrip(".") + "s"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# --- time to live ------------------------------------------------------------------------------


def expired(accepted_ms: int, ttl_s: float | None, now_ms: int) -> bool:
    """Whether a push accepted at ``accepted_ms`` with ``time_to_live`` ``ttl_s`` is no longer
    sent at ``now_ms``: more than ``max(ttl, NOW_WINDOW_MS)`` has passed (the deadline itself
    is still in time). No ttl (or an infinite one) never expires."""
    if ttl_s is None or ttl_s == math.inf:
        return False
    if not ttl_s >= 0:
        raise ValueError(f"time_to_live must be >= 0, not {ttl_s!r}")
    return now_ms - accepted_ms > max(ttl_s * 1000, NOW_WINDOW_MS)


def remaining_ttl(accepted_ms: int, ttl_s: float | None, now_ms: int) -> float | None:
    """The time to live left at ``now_ms`` (never below 0: then "now or never"), to give the
    providers so that their deadline is the acceptance-based one; ``None`` without expiry."""
    if ttl_s is None or ttl_s == math.inf:
        return None
    if not ttl_s >= 0:
        raise ValueError(f"time_to_live must be >= 0, not {ttl_s!r}")
    return max(0.0, ttl_s - max(0, now_ms - accepted_ms) / 1000)
