"""PagerDuty Events API v2 (``POST /v2/enqueue``) mapped onto one native publish request — pure.

- ``routing_key``: an integration key bound to one workflow topic (api/formats/pagerduty.py finds it);
- ``dedup_key`` → ``event_control.partition_key`` and ``event.id``: a trigger and the acknowledge or
  resolve naming the same key pair up (the METRIC/SET episode of the key, or on BYPASS topics the
  incident whose publisher ``event.id`` it is). A trigger without one gets the server's event id,
  answered as its ``dedup_key`` as Events v2 does;
- ``event_action`` ``trigger`` → the topic's policy decides; ``acknowledge`` / ``resolve`` →
  ``event_control.action``;
- ``payload.summary`` → ``event.name`` (cut to 1024 characters, as Events v2 truncates it);
  ``payload`` (summary, source, severity, timestamp, component, group, class, custom_details) and the
  event's ``links``, ``images``, ``client``, ``client_url``, ``dedup_key`` and ``event_action`` →
  ``data``, so topic fields and filters read ``severity`` or ``custom_details.host``;
- the publish status is ``ACTUAL``.

Refusals are Events v2's: a list of messages naming its fields (``'payload.severity' is invalid``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from app.errors import InvalidInput

ACTIONS = ("trigger", "acknowledge", "resolve")
SEVERITIES = ("critical", "error", "warning", "info")
MAX_DEDUP_KEY_CHARS = 255  # Events v2's limit (and under the publish's partition key limit, 256)
MAX_SUMMARY_CHARS = 1024  # Events v2 truncates a longer summary; so does this mapping (event.name's limit)
_PAYLOAD_STRINGS = ("timestamp", "component", "group", "class")
_EVENT_EXTRAS = ("links", "images", "client", "client_url")


@dataclass(frozen=True, slots=True)
class EnqueueEvent:
    """A checked Events v2 event: its routing key, action, dedup key (None: a trigger without one)
    and the ``data`` of the publish it becomes."""

    routing_key: str
    action: str
    dedup_key: str | None
    summary: str | None
    data: dict[str, Any]


class InvalidEvent(InvalidInput):
    """The body is not an Events v2 event: ``errors`` name its fields; answered as Events v2's
    ``400 invalid event`` (api/formats/pagerduty.py). The sender must fix the event: resending it
    as it is fails again."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors), details={"errors": errors})
        self.errors = errors


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def parse_event(body: bytes) -> EnqueueEvent:
    """The Events v2 event ``body`` holds, checked; raises :class:`InvalidEvent` listing every fault."""
    try:
        event = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if exc.msg == "depth limit exceeded":  # valid JSON, deeper than orjson reads (1024 levels)
            raise InvalidEvent(["the body is nested too deep (more than 1024 levels)"]) from None
        raise InvalidEvent(["the body is not valid JSON"]) from None
    if not isinstance(event, dict):
        raise InvalidEvent(["the body must be a JSON object (an Events v2 event)"])
    errors: list[str] = []
    routing_key = event.get("routing_key")
    if _blank(routing_key):
        errors.append("'routing_key' is missing or blank")
    action = event.get("event_action")
    if action not in ACTIONS:
        errors.append("'event_action' is missing or invalid (trigger, acknowledge or resolve)")
    dedup_key = event.get("dedup_key")
    if dedup_key is not None and (_blank(dedup_key) or len(dedup_key) > MAX_DEDUP_KEY_CHARS):
        errors.append(f"'dedup_key' must be a non-blank string of at most {MAX_DEDUP_KEY_CHARS} characters")
    elif dedup_key is None and action in ("acknowledge", "resolve"):
        errors.append(f"'dedup_key' is required to {action}")
    data: dict[str, Any] = {}
    summary: str | None = None
    if action == "trigger":
        summary = _check_payload(event.get("payload"), data, errors)
    for name in _EVENT_EXTRAS:
        if name in event:
            if name in ("links", "images") and not isinstance(event[name], list):
                errors.append(f"'{name}' must be an array")
            elif name in ("client", "client_url") and not isinstance(event[name], str):
                errors.append(f"'{name}' must be a string")
            else:
                data[name] = event[name]
    if errors:
        raise InvalidEvent(errors)
    assert isinstance(routing_key, str) and isinstance(action, str)
    data["event_action"] = action
    if dedup_key is not None:
        data["dedup_key"] = dedup_key
    return EnqueueEvent(routing_key.strip(), action, dedup_key, summary, data)


def _check_payload(payload: Any, data: dict[str, Any], errors: list[str]) -> str | None:
    """A trigger's ``payload`` checked into ``data``; its summary."""
    if not isinstance(payload, dict):
        errors.append("'payload' is missing or not an object")
        return None
    summary, source, severity = payload.get("summary"), payload.get("source"), payload.get("severity")
    for name, value in (("summary", summary), ("source", source)):
        if _blank(value):
            errors.append(f"'payload.{name}' is missing or blank")
    if severity not in SEVERITIES:
        errors.append("'payload.severity' is missing or invalid (critical, error, warning or info)")
    for name in _PAYLOAD_STRINGS:
        if name in payload and not isinstance(payload[name], str):
            errors.append(f"'payload.{name}' must be a string")
    details = payload.get("custom_details")  # any JSON, as Events v2 takes it
    data.update({k: payload[k] for k in ("summary", "source", "severity", *_PAYLOAD_STRINGS) if k in payload})
    if details is not None:
        data["custom_details"] = details
    return summary if isinstance(summary, str) else None


def publish_request(event: EnqueueEvent, dedup_key: str) -> bytes:
    """The native publish request of a checked event whose dedup key is ``dedup_key`` (the event's
    own, or the server event id given to a trigger without one)."""
    info: dict[str, Any] = {"id": dedup_key}
    if event.summary:
        summary = event.summary
        info["name"] = summary if len(summary) <= MAX_SUMMARY_CHARS else summary[: MAX_SUMMARY_CHARS - 1] + "…"
    control: dict[str, Any] = {"partition_key": dedup_key}
    if event.action != "trigger":
        control["action"] = event.action
    data = {**event.data, "dedup_key": dedup_key}
    try:
        return orjson.dumps({"status": "ACTUAL", "event": info, "data": data, "event_control": control})
    except TypeError:  # orjson: deeper than it encodes (far past the publish's own limit)
        raise InvalidEvent(["'payload.custom_details' is nested too deeply"]) from None


_NATIVE_TO_EVENT = (
    ("data.custom_details", "payload.custom_details"),
    ("data.links", "links"),
    ("data.images", "images"),
    ("data", "payload"),
    ("event.name", "payload.summary"),
    ("event.id", "dedup_key"),
    ("event_control.partition_key", "dedup_key"),
)


def event_field(native_field: str) -> str:
    """The Events v2 field behind a refused publish request's field (``payload.custom_details.x``)."""
    for native, field in _NATIVE_TO_EVENT:
        if native_field == native or native_field.startswith(native + "."):
            return field + native_field[len(native) :]
    return native_field
