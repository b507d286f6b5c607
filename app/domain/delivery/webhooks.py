"""Outgoing webhooks after Standard Webhooks (https://www.standardwebhooks.com, spec 1.0.0):
secrets, signatures, headers and the JSON body.

Pure: the executor does the HTTP (SSRF guard) and the Kafka retry topics; this module decides
what to send. When to try again is ``delivery_verdicts.py`` on ``retry_schedule.py``.

- Secrets are ``whsec_<base64>`` of 24 to 64 random bytes (the spec's bounds); the key is
  the decoded bytes. Read paths show :func:`mask_secret` only.
- ``webhook-id`` is the delivery's effect id, stable across retries (the receiver dedupes on
  it); ``webhook-timestamp`` is the attempt's time, fresh per attempt; ``webhook-signature`` is
  ``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Callable
from typing import Any

from app.domain.events.control import ControlDecision
from app.domain.events.publish import PublishStatus
from app.domain.shared.milliseconds import iso_ms

SECRET_PREFIX = "whsec_"
MIN_SECRET_BYTES = 24  # Standard Webhooks: at least 192 bits…
MAX_SECRET_BYTES = 64  # …and at most 512
NEW_SECRET_BYTES = 32
EVENT_TYPE_PREFIX = "tocsin.event."

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
# Printable ASCII without space and without "." (the signed content is "{id}.{ts}.{body}").
_MSG_ID = re.compile(r"[\x21-\x2d\x2f-\x7e]{1,256}")


# --- secrets ---------------------------------------------------------------------------------


def new_secret(random_bytes: Callable[[int], bytes] = secrets.token_bytes, *, size: int = NEW_SECRET_BYTES) -> str:
    """A fresh ``whsec_`` secret of ``size`` random bytes (24 to 64) from ``random_bytes``."""
    if not MIN_SECRET_BYTES <= size <= MAX_SECRET_BYTES:
        raise ValueError(f"a webhook secret has {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes")
    raw = random_bytes(size)
    if len(raw) != size:
        raise ValueError("the random source returned the wrong number of bytes")
    return SECRET_PREFIX + base64.b64encode(raw).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_<base64>`` secret; ValueError when it is malformed.

    The base64 is the standard alphabet; missing ``=`` padding is accepted (the reference
    libraries accept it too). The prefix is required, and the key must have 24 to 64 bytes.
    """
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"a webhook secret starts with {SECRET_PREFIX!r}")
    text = secret[len(SECRET_PREFIX) :]
    if not _BASE64.fullmatch(text):
        raise ValueError("a webhook secret is base64 after its prefix")
    unpadded = text.rstrip("=")
    if len(unpadded) % 4 == 1 or (text != unpadded and len(text) % 4 != 0):
        raise ValueError("a webhook secret is base64 after its prefix")
    try:
        key = base64.b64decode(unpadded + "=" * (-len(unpadded) % 4), validate=True)
    except binascii.Error as exc:
        raise ValueError("a webhook secret is base64 after its prefix") from exc
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise ValueError(f"a webhook secret has {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes")
    return key


def mask_secret(secret: str) -> str:
    """What a read shows of a secret: ``whsec_`` + its first 4 base64 characters + ``****``.

    Never raises: a value that is not a well-formed secret masks to ``****`` (nothing of it shown).
    """
    try:
        secret_key(secret)
    except ValueError:
        return "****"
    return SECRET_PREFIX + secret[len(SECRET_PREFIX) : len(SECRET_PREFIX) + 4] + "****"


# --- signing and headers ---------------------------------------------------------------------


def _check_metadata(msg_id: str, timestamp_s: int) -> None:
    if not isinstance(msg_id, str) or not _MSG_ID.fullmatch(msg_id):
        raise ValueError("webhook-id is 1-256 printable ASCII characters without spaces or '.'")
    if isinstance(timestamp_s, bool) or not isinstance(timestamp_s, int) or timestamp_s < 0:
        raise ValueError("webhook-timestamp is a non-negative integer (seconds since the epoch)")


def sign(secret: str, msg_id: str, timestamp_s: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of b"{msg_id}.{timestamp_s}." + body>`` (Standard Webhooks v1)."""
    _check_metadata(msg_id, timestamp_s)
    content = f"{msg_id}.{timestamp_s}.".encode("ascii") + body
    digest = hmac.new(secret_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def webhook_headers(secret: str, msg_id: str, timestamp_s: int, body: bytes, mode: str) -> dict[str, str]:
    """The headers of one attempt. ``msg_id`` is the delivery's effect id (the same on every
    retry); ``timestamp_s`` is this attempt's time, so a retry is signed afresh."""
    status = PublishStatus(mode)  # ValueError for anything but ACTUAL / DRILL / TEST
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp_s),
        "webhook-signature": sign(secret, msg_id, timestamp_s, body),
        "content-type": "application/json",
        "Tocsin-Mode": status.value,
    }


# --- body ------------------------------------------------------------------------------------


def webhook_body(record: dict[str, Any], decision: str, topic_key: str, incident_id: str | None) -> bytes:
    """The JSON body of a delivery for a decided event ``record`` (the agents' record format).

    ``{type, timestamp, event_id, decision, status, release, exercise, topic, partition_key,
    data, event, incident_id?}``:

    - ``type`` is ``tocsin.event.notify`` or ``tocsin.event.resolve``; a RESOLVE is a release
      notice and says so twice (its type and ``"release": true``). SUPPRESS sends nothing, so
      it is refused (ValueError).
    - ``status`` is the publish mode; ``"exercise": true`` marks DRILL and TEST bodies (the
      ``Tocsin-Mode`` header says the same), false for ACTUAL. ``release`` and ``exercise`` are
      always present so every body has one schema.
    - ``timestamp`` (Standard Webhooks' payload field) is when the event was accepted, ISO 8601
      UTC with milliseconds; absent only if the record has no ``accepted_ms``.
    - ``event_id`` is the server's event id; ``event`` the publisher's ``{id, lang, name,
      description}`` as published (``{}`` for an auto-resolve); ``incident_id`` only when given.

    Compact JSON, UTF-8, keys in this order: the same input gives the same bytes. A string
    that cannot be UTF-8 encoded (a lone surrogate) makes the whole body ASCII-escaped instead.
    """
    kind = ControlDecision(decision)
    if kind is ControlDecision.SUPPRESS:
        raise ValueError("a suppressed event sends no webhook")
    status = PublishStatus(record["status"])
    body: dict[str, Any] = {"type": EVENT_TYPE_PREFIX + kind.value.lower()}
    accepted_ms = record.get("accepted_ms")
    if accepted_ms is not None:
        body["timestamp"] = iso_ms(int(accepted_ms))
    body.update(
        event_id=record["id"],
        decision=kind.value,
        status=status.value,
        release=kind is ControlDecision.RESOLVE,
        exercise=status is not PublishStatus.ACTUAL,
        topic=topic_key,
        partition_key=(record.get("event_control") or {}).get("partition_key"),
        data=record.get("data") or {},
        event=record.get("event") or {},
    )
    if incident_id is not None:
        body["incident_id"] = incident_id
    try:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")
