"""Prometheus Alertmanager's webhook (version 4) mapped onto native publish requests: one per alert.

- ``fingerprint`` → ``event_control.partition_key`` (an alert's firing and its resolve share it);
- ``status`` ``firing`` → a trigger (the topic's policy decides), ``resolved`` →
  ``event_control.action: "resolve"``;
- ``labels``, ``annotations``, ``status``, ``startsAt``, ``endsAt``, ``generatorURL``,
  ``fingerprint`` and the notification's ``receiver`` and ``groupKey`` → ``data`` (topic fields
  and filters read ``labels.severity``, ``annotations.summary``…);
- ``annotations.summary`` (else ``labels.alertname``) → ``event.name``; ``annotations.description``
  → ``event.description`` (each cut to the publish's limit with "…"; whole in ``data``);
- ``fingerprint`` + ``status`` + ``startsAt`` → ``attributes.idempotency_key``: Alertmanager sends a
  firing alert again at every ``repeat_interval`` and group change; the repeats are dropped.
- the publish status is ``ACTUAL``.

A refusal names the webhook's own field (``alerts.2.fingerprint``).
"""

from __future__ import annotations

from typing import Any

import orjson

from app.errors import InvalidInput

VERSION = "4"
STATUSES = ("firing", "resolved")
# event.name and event.description's limits (app/domain/events/publish.py): a longer summary or
# description is cut there (whole in data.annotations), not refused: Alertmanager drops a 4xx.
MAX_NAME_CHARS, MAX_DESCRIPTION_CHARS = 1024, 16384


def refused(field: str, message: str, kind: str = "value_error") -> InvalidInput:
    return InvalidInput(
        f"Alertmanager webhook refused: {field}: {message}" if field else f"Alertmanager webhook refused: {message}",
        details={"fields": [{"field": field, "message": message, "type": kind}]},
    )


def _json_fault(exc: orjson.JSONDecodeError) -> str:
    """orjson's reason, said plainly where it is only the nesting (valid JSON, deeper than 1024 levels)."""
    return "nested deeper than 1024 levels" if exc.msg == "depth limit exceeded" else exc.msg


def notification(body: bytes) -> dict[str, Any]:
    """The webhook body, checked for what the mapping reads (version 4, a list of alerts)."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise refused("", f"the body is not valid JSON ({_json_fault(exc)})", "json_invalid") from None
    if not isinstance(message, dict):
        raise refused("", "the body must be Alertmanager's webhook JSON object", "dict_type")
    if message.get("version") != VERSION:
        raise refused("version", f"must be {VERSION!r} (Alertmanager's webhook version 4)")
    alerts = message.get("alerts")
    if not isinstance(alerts, list) or not alerts:
        raise refused("alerts", "must be a non-empty list of alerts", "list_type")
    return message


def alert_requests(message: dict[str, Any]) -> list[tuple[str, bytes]]:
    """``(field prefix, publish request JSON)`` of each alert of a checked notification."""
    return [
        (f"alerts.{index}", publish_request(message, alert, index)) for index, alert in enumerate(message["alerts"])
    ]


def publish_request(message: dict[str, Any], alert: Any, index: int) -> bytes:
    """The native publish request of one alert of ``message``."""
    at = f"alerts.{index}"
    if not isinstance(alert, dict):
        raise refused(at, "an alert is a JSON object", "dict_type")
    fingerprint = alert.get("fingerprint")
    if not isinstance(fingerprint, str) or not fingerprint:
        raise refused(f"{at}.fingerprint", "must be a non-empty string", "missing")
    status = alert.get("status")
    if status not in STATUSES:
        raise refused(f"{at}.status", "must be 'firing' or 'resolved'")
    labels, annotations = alert.get("labels", {}), alert.get("annotations", {})  # null is no object
    for name, value in (("labels", labels), ("annotations", annotations)):
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise refused(f"{at}.{name}", "must be an object of strings", "dict_type")
    data: dict[str, Any] = {"labels": labels, "annotations": annotations, "status": status, "fingerprint": fingerprint}
    for name in ("startsAt", "endsAt", "generatorURL"):
        if isinstance(alert.get(name), str):
            data[name] = alert[name]
    for name in ("receiver", "groupKey", "externalURL"):
        if isinstance(message.get(name), str):
            data[name] = message[name]
    event: dict[str, Any] = {}
    title = annotations.get("summary") or labels.get("alertname")
    if title:
        event["name"] = _shortened(title, MAX_NAME_CHARS)
    if annotations.get("description"):
        event["description"] = _shortened(annotations["description"], MAX_DESCRIPTION_CHARS)
    control: dict[str, Any] = {"partition_key": fingerprint}
    if status == "resolved":
        control["action"] = "resolve"
    request: dict[str, Any] = {
        "status": "ACTUAL",
        "data": data,
        "event_control": control,
        "attributes": {"idempotency_key": f"am/{fingerprint}/{status}/{data.get('startsAt', '')}"},
    }
    if event:
        request["event"] = event
    return orjson.dumps(request)


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_NATIVE_TO_WEBHOOK = (
    ("data.labels", "labels"),
    ("data.annotations", "annotations"),
    ("data", ""),
    ("event.name", "annotations.summary"),
    ("event.description", "annotations.description"),
    ("event_control.partition_key", "fingerprint"),
    ("event_control.action", "status"),
    ("attributes.idempotency_key", "fingerprint"),
)


def webhook_field(prefix: str, native_field: str) -> str:
    """The webhook's field behind a refused publish request's field (``alerts.0.labels.x``)."""
    for native, field in _NATIVE_TO_WEBHOOK:
        if native_field == native or native_field.startswith(native + "."):
            rest = native_field[len(native) :]
            inner = (field + rest) if field else rest.lstrip(".")
            return f"{prefix}.{inner}" if inner else prefix
    return f"{prefix}.{native_field}" if native_field else prefix
