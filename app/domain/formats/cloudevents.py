"""CloudEvents 1.0 (HTTP binding) mapped onto the native publish request.

One event becomes the JSON of one publish request, which the API then checks exactly as a native
publish (app/domain/events/publish_check.py); a refusal names the CloudEvents attribute at fault
(:func:`attribute_of`). The mapping (docs/api.md, "CloudEvents"):

- ``data`` → ``data`` (a JSON object; ``datacontenttype`` absent or JSON);
- ``source`` + ``id`` → ``attributes.idempotency_key`` (a repeated event is dropped);
- ``type`` → ``event.name``; ``subject`` → ``event.description``;
- ``partitionkey`` (the partitioning extension) → ``event_control.partition_key``;
- ``tocsinstatus`` → ``status`` (``ACTUAL`` when absent), ``tocsinmetrics`` (a JSON object of
  numbers, as text) → ``event_control.metrics``, ``tocsinareas`` (a JSON array of strings, as
  text) → ``event_control.areas``, ``tocsinaction`` → ``event_control.action``.

Extension values are strings because binary mode carries every attribute in a header; the JSON
text is the same in both modes. Other attributes (``time``, ``dataschema``, unknown extensions)
are accepted and not kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

import orjson

from app.errors import InvalidInput, UnsupportedMediaType

STRUCTURED = "application/cloudevents+json"
BATCH = "application/cloudevents-batch+json"
SPECVERSION = "1.0"
HEADER_PREFIX = "ce-"

STATUS = "tocsinstatus"
METRICS = "tocsinmetrics"
AREAS = "tocsinareas"
ACTION = "tocsinaction"
PARTITION_KEY = "partitionkey"
REQUIRED = ("id", "source", "type")

# The native field (a path's first segments) each attribute fills, for naming the attribute at fault.
_NATIVE_TO_ATTRIBUTE = (
    ("data", "data"),
    ("status", STATUS),
    ("event.name", "type"),
    ("event.description", "subject"),
    ("event_control.partition_key", PARTITION_KEY),
    ("event_control.metrics", METRICS),
    ("event_control.areas", AREAS),
    ("event_control.action", ACTION),
    ("attributes.idempotency_key", "id"),
)


def attribute_of(native_field: str) -> str:
    """The CloudEvents attribute that filled ``native_field`` (a refused publish's field path,
    ``data.x.0`` → ``data.x.0``, ``event_control.partition_key`` → ``partitionkey``)."""
    for native, attribute in _NATIVE_TO_ATTRIBUTE:
        if native_field == native or native_field.startswith(native + "."):
            return attribute + native_field[len(native) :]
    return native_field


def refused(attribute: str, message: str, kind: str = "value_error") -> InvalidInput:
    """422 VAL-001 naming one CloudEvents attribute."""
    return InvalidInput(
        f"CloudEvents attribute {attribute!r}: {message}",
        details={"fields": [{"field": attribute, "message": message, "type": kind}]},
    )


def idempotency_key(source: str, event_id: str) -> str:
    """The publish's idempotency key: ``source`` and ``id`` identify an event (CloudEvents 1.0,
    "id"); the length prefix keeps two pairs from ever spelling the same key."""
    return f"ce/{len(source)}/{source}/{event_id}"


def is_json_media(content_type: str | None) -> bool:
    """Whether ``datacontenttype`` says JSON (absent: JSON, as the JSON event format reads it)."""
    if content_type is None:
        return True
    media = content_type.partition(";")[0].strip().lower()
    return media in ("", "application/json", "text/json") or (
        media.startswith("application/") and media.endswith("+json")
    )


def binary_attributes(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The attributes of a binary-mode request: each ``ce-<name>`` header, percent-decoded (HTTP
    binding 3.1.3.2). A repeated header is refused: an attribute has one value."""
    attributes: dict[str, str] = {}
    for name, value in headers:
        if name[:3].lower() != b"ce-":
            continue
        attribute = name[3:].decode("latin-1").lower()
        if attribute in attributes:
            raise refused(attribute, f"the header ce-{attribute} is repeated; an attribute has one value")
        try:
            attributes[attribute] = unquote(value.decode("utf-8"), errors="strict")
        except UnicodeDecodeError:
            raise refused(attribute, "not UTF-8 text (percent-encode it)") from None
    return attributes


def from_binary(attributes: Mapping[str, str], content_type: str | None, body: bytes) -> bytes:
    """The native publish body of a binary-mode event: ``attributes`` from its ``ce-*`` headers,
    ``content_type`` its ``datacontenttype`` (the ``Content-Type`` header), ``body`` its data."""
    if not is_json_media(content_type):
        raise UnsupportedMediaType(
            f"CloudEvents attribute 'datacontenttype' is {content_type!r}: the event's data must be a JSON "
            "object (application/json)"
        )
    _check_context(attributes)
    if not body.strip():
        raise refused("data", "missing: the body (the event's data) must be a JSON object", "missing")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise refused("data", f"not valid JSON ({exc.msg})", "json_invalid") from None
    if not isinstance(data, dict):
        raise refused("data", "must be a JSON object", "dict_type")
    # the data's own bytes, as sent: decoded once above to be sure it is one object, never encoded again
    return b'{"data":' + body.strip() + b"," + orjson.dumps(_native(attributes))[1:]


def from_structured(body: bytes) -> bytes:
    """The native publish body of a structured-mode event (``application/cloudevents+json``)."""
    try:
        event = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(
            f"the body is not a JSON CloudEvent: {exc.msg}",
            details={"fields": [{"field": "", "message": "the body is not valid JSON", "type": "json_invalid"}]},
        ) from None
    return from_event(event)


def from_event(event: Any) -> bytes:
    """The native publish body of one event in the JSON event format (structured mode, or one
    element of a batch)."""
    if not isinstance(event, dict):
        raise refused("", "a CloudEvent is a JSON object", "dict_type")
    attributes = {name: value for name, value in event.items() if name not in ("data", "data_base64")}
    if "data_base64" in event:
        raise refused("data_base64", "binary data is not accepted: send the data as a JSON object in 'data'")
    datacontenttype = attributes.get("datacontenttype")
    if datacontenttype is not None and (not isinstance(datacontenttype, str) or not is_json_media(datacontenttype)):
        raise refused("datacontenttype", "the event's data must be JSON (application/json)")
    _check_context(attributes)
    if "data" not in event:
        raise refused("data", "missing: the event's data must be a JSON object", "missing")
    if not isinstance(event["data"], dict):
        raise refused("data", "must be a JSON object", "dict_type")
    try:
        return orjson.dumps({"data": event["data"], **_native(attributes)})
    except TypeError as exc:  # orjson writes at most 254 levels of nesting (it reads 1,024)
        why = "nested too deeply" if "Recursion" in str(exc) else f"cannot be written as JSON ({exc})"
        raise refused("data", why, "value_error") from None


def _check_context(attributes: Mapping[str, Any]) -> None:
    version = attributes.get("specversion")
    if version is None:
        raise refused("specversion", 'missing (CloudEvents 1.0: "1.0")', "missing")
    if version != SPECVERSION:
        raise refused("specversion", f'{version!r} is not supported: only CloudEvents 1.0 ("1.0")')
    for name in REQUIRED:
        value = attributes.get(name)
        if value is None:
            raise refused(name, "missing (a required attribute)", "missing")
        if not isinstance(value, str) or not value:
            raise refused(name, "must be a non-empty string", "string_type")
    for name in (STATUS, METRICS, AREAS, ACTION, PARTITION_KEY, "subject"):
        value = attributes.get(name)
        if value is not None and not isinstance(value, str):
            raise refused(name, "must be a string", "string_type")


def _json_text(attributes: Mapping[str, Any], name: str) -> Any:
    text = attributes.get(name)
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise refused(name, f"must be JSON text ({exc.msg})", "json_invalid") from None


def _native(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The publish request's fields but ``data``, from the event's context attributes (checked)."""
    control: dict[str, Any] = {}
    if (key := attributes.get(PARTITION_KEY)) is not None:
        control["partition_key"] = key
    if (metrics := _json_text(attributes, METRICS)) is not None:
        control["metrics"] = metrics
    if (areas := _json_text(attributes, AREAS)) is not None:
        control["areas"] = areas
    if (action := attributes.get(ACTION)) is not None:
        control["action"] = action
    event: dict[str, Any] = {"name": attributes["type"]}
    if (subject := attributes.get("subject")) is not None:
        event["description"] = subject
    native: dict[str, Any] = {
        "status": attributes.get(STATUS, "ACTUAL"),
        "event": event,
        "attributes": {"idempotency_key": idempotency_key(attributes["source"], attributes["id"])},
    }
    if control:
        native["event_control"] = control
    return native
