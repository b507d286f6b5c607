"""The publish hot path as the outermost ASGI layer, ahead of FastAPI's middleware and routing.

``POST /v1/organizations/{org_id}/workflow_topics/{topic}/publish`` is answered here by
:func:`api.routes.publish.accept_publish`, the same code the FastAPI route runs, with the same
JSON bodies (:func:`api.errors.describe`) and the same ``X-Request-ID`` rule as
``RequestIdMiddleware`` (echo the caller's, at most 128 bytes, or assign one). Routing,
middleware and dependency solving cost about half of a publish in FastAPI; here one
``str.split`` finds the route. Every other request, and a publish before the lifespan has
created the state, goes through FastAPI unchanged. The FastAPI route stays: it documents
the operation in the OpenAPI document and serves it whenever this layer does not.
"""

from __future__ import annotations

import logging

import orjson
from fastapi import FastAPI
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from api.errors import UNEXPECTED, describe
from api.routes.publish import accept_publish
from api.state import ApiState
from app.domain.ids import new_id

log = logging.getLogger(__name__)

_JSON = (b"content-type", b"application/json")


def publish_target(scope: Scope) -> tuple[str, str] | None:
    """``(org_id, topic)`` when the request is a publish, else None (Starlette's ``[^/]+`` segments)."""
    if scope["method"] != "POST":
        return None
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    parts = path.split("/")
    if (
        len(parts) != 7
        or parts[6] != "publish"
        or parts[4] != "workflow_topics"
        or parts[2] != "organizations"
        or parts[1] != "v1"
        or parts[0]
        or not parts[3]
        or not parts[5]
    ):
        return None
    return parts[3], parts[5]


async def serve_publish(state: ApiState, org_id: str, topic: str, scope: Scope, receive: Receive, send: Send) -> None:
    authorization = content_type = content_length = None
    rid = b""
    for name, value in scope["headers"]:
        if name == b"authorization" and authorization is None:
            authorization = value.decode("latin-1")
        elif name == b"content-type" and content_type is None:
            content_type = value.decode("latin-1")
        elif name == b"content-length" and content_length is None:
            content_length = value.decode("latin-1")
        elif name == b"x-request-id" and not rid:
            rid = value[:128]
    if not rid:
        rid = new_id("req").encode()
    extra: dict[str, str] | None = None
    try:
        event_id = await accept_publish(
            state,
            org_id,
            topic,
            authorization=authorization,
            content_type=content_type or "",
            content_length=content_length,
            receive=receive,
        )
        status, body = 202, orjson.dumps({"id": event_id})
    except ClientDisconnect:
        log.debug("client disconnected during POST %s", scope["path"])
        return
    except Exception as exc:  # every error becomes the API's JSON shape, as in api/errors.py
        described = describe(exc)
        if described is None:
            log.exception("unhandled error on POST %s", scope["path"])
            status, content, extra = 500, UNEXPECTED, None
        else:
            status, content, extra = described
        body = orjson.dumps(content)
    headers = [(b"content-length", str(len(body)).encode()), _JSON, (b"x-request-id", rid)]
    if extra:
        headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class TocsinAPI(FastAPI):
    """FastAPI whose ``__call__`` serves the publish fast path first (installed by api/main.py)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (target := publish_target(scope)) is not None:
            state: ApiState | None = getattr(self.state, "tocsin", None)
            if state is not None:
                await serve_publish(state, target[0], target[1], scope, receive, send)
                return
        await super().__call__(scope, receive, send)
