"""CloudEvents 1.0 over HTTP on the publish paths: binary mode (``ce-*`` headers, the body is the
event's data) and structured mode (``application/cloudevents+json``) on ``…/publish``, batch mode
(``application/cloudevents-batch+json``) on ``…/publish:batch``.

Each event is mapped onto a native publish request (app/domain/formats/cloudevents.py) and checked
by the same function as a native publish (app/domain/events/publish_check.py); a refusal is the same
``422 VAL-001`` with each failing field named by the CloudEvents attribute that carried it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from api.errors import describe
from app.domain.events.limits import PublishLimits
from app.domain.events.publish import PublishRequest
from app.domain.events.publish_check import check_publish
from app.domain.formats import cloudevents as ce
from app.errors import InvalidInput, UnsupportedMediaType


def media_type(content_type: str | None) -> str:
    return (content_type or "").partition(";")[0].strip().lower()


def is_structured(content_type: str | None) -> bool:
    return media_type(content_type) == ce.STRUCTURED


def is_batch(content_type: str | None) -> bool:
    return media_type(content_type) == ce.BATCH


def check_single(
    body: bytes,
    content_type: str | None,
    binary_headers: Sequence[tuple[bytes, bytes]] | None,
    limits: PublishLimits,
    *,
    partition_key_required: bool,
) -> PublishRequest:
    """The publish request of one CloudEvent sent to ``…/publish``: structured mode when the
    ``Content-Type`` says so, else binary mode (``binary_headers``, the ``ce-*`` headers)."""
    media = media_type(content_type)
    if media == ce.BATCH:
        raise UnsupportedMediaType(f"{ce.BATCH} is batch mode: send it to …/publish:batch")
    try:
        if media == ce.STRUCTURED:
            native = ce.from_structured(body)
        else:
            native = ce.from_binary(ce.binary_attributes(binary_headers or ()), content_type, body)
        return check_publish(native, limits, partition_key_required=partition_key_required)
    except (ValidationError, InvalidInput) as exc:
        raise in_attribute_terms(exc) from None


def check_event(event_body: bytes, limits: PublishLimits, *, partition_key_required: bool) -> PublishRequest:
    """One event of a batch (the JSON event format), checked as a single publish; refusals in
    attribute terms."""
    try:
        native = ce.from_structured(event_body)
        return check_publish(native, limits, partition_key_required=partition_key_required)
    except (ValidationError, InvalidInput) as exc:
        raise in_attribute_terms(exc) from None


def in_attribute_terms(exc: ValidationError | InvalidInput) -> InvalidInput:
    """The refusal of the mapped publish request, each field named by its CloudEvents attribute."""
    described = describe(exc)
    assert described is not None  # both kinds are the API's own 422s
    content: dict[str, Any] = described[1]
    details = dict(content.get("details") or {})
    fields = [{**field, "field": ce.attribute_of(str(field.get("field", "")))} for field in details.get("fields", ())]
    details["fields"] = fields
    said = "; ".join(
        f"{f['field']}: {f.get('message', 'invalid')}" if f["field"] else str(f.get("message")) for f in fields
    )
    return InvalidInput(f"CloudEvent refused: {said or content.get('message', 'invalid')}", details=details)


def binary_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The ``ce-*`` headers of a request (binary mode when there is one)."""
    return [(name, value) for name, value in headers if name[:3].lower() == b"ce-"]
