"""Reading a JSON body with the size cap and media-type check (413 / 415).

The checks work on raw header values and the ASGI ``receive`` callable, so the FastAPI
route and the publish fast path (api/fastpath.py) share them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import orjson
from fastapi import APIRouter
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_body
from app.domain.json_bounds import json_violations
from app.errors import BodyTooLarge, InvalidInput, UnsupportedMediaType


def check_json_headers(content_type: str, content_length: str | None, limit: int) -> None:
    """Refuse a body that is not JSON (415) or declares more than ``limit`` bytes (413)."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise UnsupportedMediaType("Content-Type must be application/json")
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
    """At most ``max_bytes`` of request body on every route FastAPI serves (413 VAL-002).

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
        limit = self.max_bytes
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


# The token-exchange endpoint answers every error in RFC 6749 §5.2's shape (API.md), this one too.
_TOKEN_ENDPOINT = re.compile(r"/workload-identity/[^/]+/token/?$")


async def _refuse(send: Send, limit: int, *, oauth: bool = False) -> None:
    status = BodyTooLarge.http_status
    body = orjson.dumps(error_body(BodyTooLarge.code, f"body larger than {limit} bytes"))
    if oauth:  # as the route answers a form over its own limit
        status, body = 400, orjson.dumps({"error": "invalid_request", "error_description": "the body is too large"})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
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
    """Every route of ``routers`` with a JSON body checks it (app/domain/json_bounds.py): integers
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
