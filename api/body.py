"""Reading a JSON body with the size cap and media-type check (413 / 415), and splitting a batch
publish's body (a JSON array or NDJSON) into the raw bytes of its requests.

The checks work on raw header values and the ASGI ``receive`` callable, so the FastAPI
route and the publish fast path (api/fastpath.py) share them.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import APIRouter
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_body
from app.domain.shared.json_bounds import json_violations
from app.errors import BodyTooLarge, InvalidInput, UnsupportedMediaType


def check_json_headers(
    content_type: str, content_length: str | None, limit: int, content_encoding: str | None = None
) -> None:
    """Refuse a body that is not JSON in UTF-8 or is encoded (415), or declares more than ``limit``
    bytes (413)."""
    if not _is_json(_media(content_type)):
        raise UnsupportedMediaType("Content-Type must be application/json")
    check_content_length(content_length, limit)
    check_content_encoding(content_encoding)


def check_content_encoding(content_encoding: str | None) -> None:
    """415 for a body sent with a ``Content-Encoding`` (gzip, br…): bodies are read as sent, so an
    encoded one would be refused as not JSON, or taken for what it is not."""
    if content_encoding is not None and content_encoding.strip().lower() not in ("", "identity"):
        raise UnsupportedMediaType("Content-Encoding is not supported: send the body without one (uncompressed)")


def joined_header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    """Every value of header ``name``, joined with ``", "`` (how HTTP combines a repeated field), or
    None: a second ``Content-Encoding`` or ``Content-Type`` is judged with the first, not dropped."""
    values = [value.decode("latin-1") for key, value in headers if key == name]
    return ", ".join(values) if values else None


def check_body_headers(headers: Iterable[tuple[bytes, bytes]], *, ndjson_allowed: bool = False) -> None:
    """415 for a request with a body that is not JSON in UTF-8 (NDJSON too where ``ndjson_allowed``),
    or with a ``Content-Encoding``; a request without a body passes whatever its headers say."""
    check_content_encoding(joined_header(headers, b"content-encoding"))
    content_type = joined_header(headers, b"content-type")
    media = _media(content_type) if content_type is not None else ""
    has_body = any(
        (key == b"content-length" and value.strip() not in (b"", b"0")) or key == b"transfer-encoding"
        for key, value in headers
    )
    if has_body and not (_is_json(media) or (ndjson_allowed and media == NDJSON)):
        raise UnsupportedMediaType("Content-Type must be application/json")


def _media(content_type: str) -> str:
    """The media type of ``content_type``, lower-case; 415 when it names a charset other than UTF-8
    (JSON is UTF-8, RFC 8259: a body declared otherwise would be read as what it is not)."""
    media, _, params = content_type.partition(";")
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            raise UnsupportedMediaType("the body must be UTF-8: a charset other than utf-8 is not supported")
    return media.strip().lower()


def _is_json(media: str) -> bool:
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def check_content_length(content_length: str | None, limit: int) -> None:
    """Refuse a body that declares more than ``limit`` bytes (413)."""
    if content_length is not None:
        if not content_length.isdigit():
            raise BodyTooLarge("invalid Content-Length")
        if int(content_length) > limit:
            raise BodyTooLarge(f"body larger than {limit} bytes")


async def receive_body(receive: Receive, limit: int) -> bytes:
    """The whole body from ASGI ``http.request`` messages, refused past ``limit`` bytes.

    Raises :class:`ClientDisconnect` when the client went away before sending it all.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect()
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"body larger than {limit} bytes")
        if not message.get("more_body", False):
            if not chunks:
                return chunk
            chunks.append(chunk)
            return b"".join(chunks)
        chunks.append(chunk)


class BodyLimitMiddleware:
    """At most ``max_bytes`` of request body on every route FastAPI serves (413 VAL-002) but the
    batch publish, which checks its own (TOCSIN_MAX_PUBLISH_BATCH_BYTES) after authentication, and
    PagerDuty's ``/v2/enqueue``, which answers in Events v2's terms (api/formats/pagerduty.py).

    A declared ``Content-Length`` over the limit is refused before the route runs; a body
    without one (chunked) is counted as the route reads it, and reading past the limit raises
    :class:`BodyTooLarge` there (api/errors.py answers 413). The publish fast path checks
    the same limit itself (:func:`receive_body`).
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if _BATCH_ENDPOINT.search(path) or path == ENQUEUE_PATH:
            # the batch publish checks its headers and size after authentication, as the single
            # publish does (api/routes/publish.py accept_batch): 401 before 415 and 413
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        # the token exchange's form: RFC 6749's answers (the route's); the console's forms: api/console/render.py
        if not _TOKEN_ENDPOINT.search(path) and not path.startswith("/console/"):
            try:
                check_body_headers(scope["headers"])
            except UnsupportedMediaType as exc:
                await _refuse_unsupported(send, exc)
                return
        for name, value in scope["headers"]:
            if name == b"content-length":
                if not value.isdigit() or int(value) > limit:
                    await _refuse(send, limit, oauth=bool(_TOKEN_ENDPOINT.search(scope.get("path", ""))))
                    return
                await self.app(scope, receive, send)  # the server reads no more than declared
                return
        size = 0

        async def limited() -> Message:
            nonlocal size
            message = await receive()
            if message["type"] == "http.request":
                size += len(message.get("body", b""))
                if size > limit:
                    raise BodyTooLarge(f"body larger than {limit} bytes")
            return message

        await self.app(scope, limited, send)


# The token-exchange endpoint answers every error in RFC 6749 §5.2's shape (docs/api.md, "Token
# exchange errors"), this one too.
_TOKEN_ENDPOINT = re.compile(r"/workload-identity/[^/]+/token/?$")
_BATCH_ENDPOINT = re.compile(r"/workflow_topics/[^/]+/publish:batch$")
# PagerDuty's Events v2: the route answers every refusal, an oversized body too, in Events v2's terms
ENQUEUE_PATH = "/v2/enqueue"


async def _refuse(send: Send, limit: int, *, oauth: bool = False) -> None:
    status = BodyTooLarge.http_status
    body = orjson.dumps(error_body(BodyTooLarge.code, f"body larger than {limit} bytes"))
    if oauth:  # as the route answers a form over its own limit
        status, body = 400, orjson.dumps({"error": "invalid_request", "error_description": "the body is too large"})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refuse_unsupported(send: Send, exc: UnsupportedMediaType) -> None:
    body = orjson.dumps(error_body(exc.code, exc.message))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": exc.http_status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


_body_depth = 33  # the publish body's: data (TOCSIN_MAX_PUBLISH_DATA_DEPTH) one level inside the body's object


def _bounded(endpoint: Callable[..., Awaitable[Any]], body_name: str) -> Callable[..., Awaitable[Any]]:
    """``endpoint`` refusing, with 422 VAL-001 before it runs, a body the pipeline could not carry.

    The endpoint runs after every dependency (authentication and permission checks answer
    401/403/404 first) and after the body's model validated, and before anything is stored.
    FastAPI reads the signature and annotations through ``__wrapped__``.
    """

    @functools.wraps(endpoint)
    async def checked(*args: Any, **kwargs: Any) -> Any:
        body = kwargs.get(body_name)
        value = body.model_dump() if isinstance(body, BaseModel) else body
        if violations := list(json_violations(value, (), _body_depth)):
            raise InvalidInput(
                "; ".join(f"{field}: {message}" for field, message in violations),
                details={"fields": [{"field": f, "message": m, "type": "value_error"} for f, m in violations]},
            )
        return await endpoint(*args, **kwargs)

    checked.__tocsin_bounded__ = True  # type: ignore[attr-defined]
    return checked


def bound_json_bodies(routers: Iterable[APIRouter], max_data_depth: int) -> None:
    """Every route of ``routers`` with a JSON body checks it (app/domain/shared/json_bounds.py): integers
    within 64 bits, finite numbers, no deeper than a publish body (``data`` nests ``max_data_depth``
    levels inside the body's object). Call before ``include_router``; routers already bounded stay so."""
    global _body_depth
    _body_depth = max_data_depth + 1
    for router in routers:
        for route in router.routes:
            if not isinstance(route, APIRoute) or route.body_field is None:
                continue
            if getattr(route.endpoint, "__tocsin_bounded__", False):
                continue
            route.endpoint = _bounded(route.endpoint, route.body_field.name)
            route.dependant.call = route.endpoint


NDJSON = "application/x-ndjson"


def is_ndjson(content_type: str) -> bool:
    """Whether a batch body is NDJSON (else a JSON array); 415 for any other media type."""
    media = _media(content_type)
    if media == NDJSON:
        return True
    if _is_json(media):
        return False
    raise UnsupportedMediaType(
        f"Content-Type must be application/json (a JSON array of publish requests) or {NDJSON} (one per line)"
    )


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One publish request of a batch: its place (``index`` from 0; ``line`` from 1 in NDJSON) and raw JSON."""

    index: int
    line: int | None
    body: bytes


def _body_error(message: str, kind: str = "json_invalid") -> InvalidInput:
    return InvalidInput(message, details={"fields": [{"field": "", "message": message, "type": kind}]})


def _item_error(index: int, message: str) -> InvalidInput:
    field = {"field": "", "message": message, "type": "json_invalid"}
    return InvalidInput(
        f"publish request {index}: {message}; nothing was stored",
        details={"items": [{"index": index, "fields": [field]}]},
    )


def _too_many(max_items: int) -> InvalidInput:
    return _body_error(f"more than {max_items} publish requests (TOCSIN_MAX_PUBLISH_BATCH_ITEMS)", "limit_exceeded")


_EMPTY = "the batch holds no publish request"


def split_batch(body: bytes, *, ndjson: bool, max_items: int) -> list[BatchItem]:
    """The requests of a batch body, each as the bytes a single publish would have sent.

    NDJSON: one request per line (``\n``, optionally ``\r\n``); blank lines are skipped. A line
    that is not JSON is refused as a single publish would be, by the caller. JSON: an array; its
    elements are found with the standard library's scanner (a syntax error names the element),
    and each element's text is validated by the caller exactly as a single publish's body.
    Raises :class:`InvalidInput` (422) for a body that is not a batch, holds none or more than
    ``max_items``.
    """
    items: list[BatchItem] = []
    if ndjson:
        for number, raw in enumerate(body.split(b"\n"), start=1):
            line = raw.strip(b" \t\r")
            if not line:
                continue
            if len(items) == max_items:
                raise _too_many(max_items)
            items.append(BatchItem(len(items), number, line))
    else:
        items = [BatchItem(index, None, raw) for index, raw in enumerate(_array_elements(body, max_items))]
    if not items:
        raise _body_error(_EMPTY, "too_short")
    return items


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _scan_failure(exc: ValueError | RecursionError) -> str:
    """Why the scanner could not read an element, as a single publish of it would say."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    if "digits" in str(exc):  # int() refuses over 4,300 digits (sys.set_int_max_str_digits)
        return "a number too long to read"
    return "not valid JSON"


def _array_elements(body: bytes, max_items: int) -> list[bytes]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _body_error("the body is not UTF-8 text") from None

    def skip(at: int) -> int:
        match = _WS.match(text, at)
        assert match is not None  # the pattern matches the empty string
        return match.end()

    pos = skip(0)
    if text[pos : pos + 1] != "[":
        raise _body_error("the body must be a JSON array of publish requests (or NDJSON, one per line)")
    pos = skip(pos + 1)
    elements: list[bytes] = []
    if text[pos : pos + 1] == "]":
        pos += 1
    else:
        while True:
            if len(elements) == max_items:
                raise _too_many(max_items)
            try:
                _, end = _DECODER.raw_decode(text, pos)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError, a number too long, nesting
                message = _scan_failure(exc)
                raise _item_error(len(elements), f"invalid JSON: {message}") from None
            elements.append(text[pos:end].encode())
            pos = skip(end)
            following = text[pos : pos + 1]
            if following == ",":
                pos = skip(pos + 1)
                continue
            if following == "]":
                pos += 1
                break
            raise _item_error(len(elements) - 1, "invalid JSON: expected ',' or ']' after this publish request")
    if skip(pos) != len(text):
        raise _body_error("invalid JSON: data after the array")
    return elements
