"""The publish hot path as the outermost ASGI layer, ahead of FastAPI's middleware and routing.

``POST /v1/organizations/{org_id}/workflow_topics/{topic}/publish`` is answered here by
:func:`api.publishing.accept_publish`, the same code the FastAPI route runs, with the same
JSON bodies (:func:`api.errors.describe`) and the same ``X-Request-ID`` as every other request
(:func:`request_id`: the caller's when it is safe to log, else a new one). Routing,
middleware and dependency solving cost about half of a publish in FastAPI; here one
``str.split`` finds the route. Every other request, and a publish before the lifespan has
created the state, goes through FastAPI unchanged. The FastAPI route stays: it documents
the operation in the OpenAPI document and serves it whenever this layer does not.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable

import orjson
import structlog
from fastapi import FastAPI
from starlette.requests import ClientDisconnect
from starlette.types import Message, Receive, Scope, Send

from api.errors import UNEXPECTED, describe
from api.publishing import accept_publish
from api.state import ApiState
from app.domain.shared.client_address import Network, client_address
from app.domain.shared.ids import new_id
from app.observability import logs, metrics, tracing

log = logging.getLogger(__name__)
access_log = logs.get_logger("tocsin.access")

# A caller's X-Request-ID is kept when it is safe to log and to echo as is: at most 128 of these
# characters (a UUID, a ULID, a W3C trace id, most proxies' ids); anything else gets a new id.
_SAFE_REQUEST_ID = re.compile(rb"[A-Za-z0-9._:@+=/-]{1,128}").fullmatch


def request_id(scope: Scope) -> bytes:
    """The request's id: the caller's ``X-Request-ID`` when it is safe (above), else a new ``req_…``."""
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            if _SAFE_REQUEST_ID(value) is not None:
                return bytes(value)
            break
    return new_id("req").encode()


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
    authorization = content_length = None
    traceparents: list[bytes] | None = None
    tracestates: list[bytes] | None = None
    rid: bytes = scope["tocsin.request_id"]
    types: list[bytes] = []
    encodings: list[bytes] = []
    cloudevent: list[tuple[bytes, bytes]] | None = None  # ce-* headers: a CloudEvent in binary mode
    for name, value in scope["headers"]:
        if name == b"authorization" and authorization is None:
            authorization = value.decode("latin-1")
        elif name == b"content-type":
            types.append(value)
        elif name == b"content-length" and content_length is None:
            content_length = value.decode("latin-1")
        elif name == b"content-encoding":
            encodings.append(value)
        elif name == b"traceparent":  # all of them: a repeated one restarts the trace (W3C)
            traceparents = [*(traceparents or ()), value]
        elif name == b"tracestate":
            tracestates = [*(tracestates or ()), value]
        elif name[:3] == b"ce-":
            cloudevent = [*(cloudevent or ()), (name, value)]
    # repeated, they are judged together, as HTTP combines them (a second "gzip" or
    # "charset=latin-1" is not dropped): api/body.py joined_header
    content_type = b", ".join(types).decode("latin-1") if types else None
    content_encoding = b", ".join(encodings).decode("latin-1") if encodings else None
    extra: dict[str, str] | None = None
    # the organization goes on the log lines once the caller is authenticated for it (api/routes/publish.py)
    accepting = accept_publish(
        state,
        org_id,
        topic,
        authorization=authorization,
        content_type=content_type or "",
        content_length=content_length,
        content_encoding=content_encoding,
        receive=receive,
        request_id=rid.decode("ascii"),
        cloudevent_headers=cloudevent,
    )
    # the records carry the span's traceparent (app/observability/tracing.py)
    span = (
        tracing.publish_span("publish", PUBLISH_ROUTE, traceparents, tracestates, org_id, topic)
        if tracing.enabled
        else None
    )
    try:
        event_id = await accepting
        structlog.contextvars.bind_contextvars(event_id=event_id)
        status, body = 202, orjson.dumps({"id": event_id})
        if span is not None:
            span.set_attribute("tocsin.event_id", event_id)
            span.end(202)
    except ClientDisconnect:
        log.debug("client disconnected during POST %s", scope["path"])
        if span is not None:
            span.end(CLIENT_GONE)
        return
    except Exception as exc:  # every error becomes the API's JSON shape, as in api/errors.py
        described = describe(exc)
        if described is None:
            log.exception("unhandled error on POST %s", scope["path"])
            status, content, extra = 500, UNEXPECTED, None
        else:
            status, content, extra = described
        body = orjson.dumps(content)
        if span is not None:
            span.end(status, (type(exc).__qualname__, str(content.get("message", ""))))
    headers = [(b"content-length", str(len(body)).encode()), _JSON, (b"x-request-id", rid)]
    if extra:
        headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


CLIENT_GONE = 499  # no response was sent: the client went away first (as nginx logs it)
PUBLISH_ROUTE = "/v1/organizations/{org_id}/workflow_topics/{topic}/publish"


def use_forwarded_client(scope: Scope, proxies: tuple[Network, ...]) -> None:
    """Replace the scope's client by the address trusted proxies forwarded (app/domain/shared/client_address.py)."""
    client = scope.get("client")
    if client is None:
        return
    forwarded = [value.decode("latin-1") for name, value in scope["headers"] if name == b"x-forwarded-for"]
    host = client_address(client[0], forwarded, proxies)
    if host != client[0]:
        scope["client"] = (host, 0)


def without_content_type(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A 204's (or 304's) headers: it carries no content, so no ``content-type`` either (FastAPI's
    JSON response class set ``application/json`` on every 204 a route answered by returning None)."""
    return [(k, v) for k, v in headers if k.lower() != b"content-type"]


class TocsinAPI(FastAPI):
    """FastAPI whose ``__call__`` serves the publish fast path first (installed by api/main.py),
    and counts and logs every HTTP request once, whichever path served it. Behind trusted proxies
    (``TOCSIN_TRUSTED_PROXIES``) the request's client is the one they forwarded, on every path."""

    log_requests = True
    trusted_proxies: tuple[Network, ...] = ()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        if self.trusted_proxies:
            use_forwarded_client(scope, self.trusted_proxies)
        started = time.perf_counter()
        status_sent: list[int] = [CLIENT_GONE]
        rid = scope["tocsin.request_id"] = request_id(scope)
        structlog.contextvars.clear_contextvars()  # a connection's previous request left nothing
        structlog.contextvars.bind_contextvars(request_id=rid.decode("ascii"))

        async def send_observed(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_sent[0] = message["status"]
                if message["status"] in (204, 304):
                    message = {**message, "headers": without_content_type(message.get("headers", ()))}
            await send(message)

        route = None
        try:
            if (target := publish_target(scope)) is not None:
                route = PUBLISH_ROUTE
                state: ApiState | None = getattr(self.state, "tocsin", None)
                if state is not None:
                    await serve_publish(state, target[0], target[1], scope, receive, send_observed)
                    return
            await super().__call__(scope, receive, send_observed)
        finally:
            if route is None:
                matched = scope.get("route")
                route = getattr(matched, "path", None) or "unmatched"
            seconds = time.perf_counter() - started
            observe_request(scope, route, status_sent[0], seconds, self.log_requests)
            structlog.contextvars.clear_contextvars()


# the methods a route can serve; any other (a client may send any token) is counted as OTHER
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class _Children:
    """The metric children of one (method, route, status): ``labels()`` looked up once, not per request."""

    __slots__ = ("duration", "publishes", "requests", "seconds")

    def __init__(self, method: str, route: str, status: int) -> None:
        code = str(status)
        self.requests = metrics.HTTP_REQUESTS.labels(method, route, code)
        self.seconds = metrics.HTTP_SECONDS.labels(method, route)
        self.duration = metrics.HTTP_DURATION.labels(method, route, code)
        self.publishes = (
            metrics.PUBLISHES.labels("accepted" if status == 202 else "refused", code)
            if route == PUBLISH_ROUTE
            else None
        )


# bounded: the methods above (and OTHER) x the app's route templates (and "unmatched") x the statuses it answers
_children: dict[tuple[str, str, int], _Children] = {}


def observe_request(scope: Scope, route: str, status: int, seconds: float, log_it: bool) -> None:
    """Count the request in the metrics and write its one structured log line (with the request's
    bound fields: request id, and for a publish its organization and event id)."""
    method = scope["method"]
    key = (method if method in _METHODS else "OTHER", route, status)
    children = _children.get(key)
    if children is None:
        children = _children[key] = _Children(*key)
    children.requests.inc()
    children.seconds.observe(seconds)
    children.duration.observe(seconds)
    if children.publishes is not None:
        children.publishes.inc()
    if log_it:
        client = scope.get("client")
        access_log.info(
            "request",
            method=method,
            path=scope["path"],  # the query string is left out: it is the caller's input
            route=route,
            status=status,
            ms=round(seconds * 1000, 2),
            client=client[0] if client else None,
        )
