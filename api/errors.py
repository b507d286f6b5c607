"""The only place errors become HTTP responses: ``{"code", "message", "details"}``."""

from __future__ import annotations

import logging
from typing import Any

import orjson
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from api.responses import json_response
from app.domain.shared.rate_limit import retry_after_header
from app.domain.workflows.workflow import ActionType
from app.errors import RateLimited, TocsinError
from app.store.db import database_unavailable

log = logging.getLogger(__name__)

_HTTP_CODES = {
    401: "AUT-002",
    403: "IAM-001",
    404: "RES-001",
    405: "RES-003",
    409: "RES-002",
    413: "VAL-002",
    415: "VAL-003",
    422: "VAL-001",
    429: "RATE-001",
    503: "SYS-001",
}

_TAGS = frozenset(ActionType)  # the discriminator values of tagged unions (workflow actions)


class ErrorOut(BaseModel):
    """The API's error body: every refusal's ``code``, ``message`` and ``details`` (docs/reference/errors.md)."""

    code: str
    message: str
    details: dict[str, Any]


class OAuthErrorOut(BaseModel):
    """The token exchange's error body (RFC 6749 §5.2)."""

    error: str
    error_description: str


_DESCRIPTIONS = {
    401: "AUT-002 no or malformed Authorization header; AUT-003 unknown or revoked token; AUT-004 expired token",
    403: "IAM-001 missing permission; IAM-002 change refused",
    404: "RES-001 not found (also another organization's resources)",
    409: "RES-002 conflict: duplicate key or name, still referenced, or not in a state that allows it",
    413: "VAL-002 body too large",
    415: "VAL-003 body not JSON",
    422: "VAL-001 invalid body or parameters; the failing fields in details",
    429: "RATE-001 too many requests; Retry-After says when to retry",
    503: "SYS-001 broker or database unavailable; nothing was accepted, safe to retry",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: these statuses answer with :class:`ErrorOut`."""
    return {status: {"model": ErrorOut, "description": _DESCRIPTIONS[status]} for status in statuses}


CONFLICT = error_responses(409)
_UNAUTHENTICATED = frozenset({"/healthz", "/readyz", "/metrics"})
RFC6749_ERRORS = "x-rfc6749-errors"  # operation extension: errors in the token exchange's form
OWN_ERRORS = "x-own-errors"  # operation extension: the route documents every answer (PagerDuty's /v2/enqueue)


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details or {}}


# The statuses HTTP gives Retry-After a meaning for (RFC 6585 §4, RFC 9110 §10.2.3): a retriable error
# answered with one of them says when to try again; any other retriable answer (a 422 for a fetch
# that timed out) carries no header.
WAIT_STATUSES = frozenset({429, 503})
MAX_LISTED_FIELDS = 20  # a 422 lists at most this many failing fields, then counts the rest


def validation_details(errors: list[Any]) -> dict[str, Any]:
    """Failing fields as ``{"fields": [{"field": "a.b", "message": ..., "type": ...}]}`` (no input
    echoed back): the first :data:`MAX_LISTED_FIELDS`, and ``more_fields`` counting the rest, so a
    body of thousands of unknown keys cannot make an answer many times its own size."""
    fields = []
    for err in errors[:MAX_LISTED_FIELDS]:
        # A tagged union (the action types) puts its tag in the location; the caller's path has none.
        # A query parameter is named as the caller spells it (``status``, not ``query.status``).
        where = tuple(err.get("loc", ()))
        where = where[1:] if where[:1] == ("query",) else where
        loc = ".".join(str(p) for p in where if p != "body" and p not in _TAGS)
        fields.append({"field": loc, "message": err.get("msg", "invalid"), "type": err.get("type", "")})
    details: dict[str, Any] = {"fields": fields}
    if len(errors) > MAX_LISTED_FIELDS:
        details["more_fields"] = len(errors) - MAX_LISTED_FIELDS
    return details


def describe(exc: Exception) -> tuple[int, dict[str, Any], dict[str, str] | None] | None:
    """Status, JSON body and extra headers of an error the service raises on purpose (else None).

    Shared by the exception handlers below and the publish fast path (api/fastpath.py).
    """
    if isinstance(exc, TocsinError):
        wait = exc.retry_after if isinstance(exc, RateLimited) else 1.0
        headers = (
            {"Retry-After": retry_after_header(wait)} if exc.retriable and exc.http_status in WAIT_STATUSES else None
        )
        return exc.http_status, error_body(exc.code, exc.message, exc.details), headers
    if isinstance(exc, ValidationError):  # without the input, context and URL: nothing of them is answered
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        return 422, error_body("VAL-001", "request validation failed", validation_details(list(errors))), None
    if isinstance(exc, RequestValidationError):
        return 422, error_body("VAL-001", "request validation failed", validation_details(list(exc.errors()))), None
    if database_unavailable(exc):
        log.warning("database unavailable: %s", type(exc).__name__)
        body = error_body("SYS-001", "the database is unavailable; nothing was changed, retry later")
        return 503, body, {"Retry-After": "1"}
    return None


UNEXPECTED = error_body("SYS-000", "internal error")
NOT_JSON = {"fields": [{"field": "", "message": "the body is not valid JSON", "type": "json_invalid"}]}
NESTED_TOO_DEEP = {"fields": [{"field": "", "message": "JSON nested too deeply", "type": "json_invalid"}]}


def _described(exc: Exception) -> Response:
    described = describe(exc)
    assert described is not None
    status, body, headers = described
    return json_response(body, status, headers=headers)


def _document_errors(app: FastAPI, schema: dict[str, Any]) -> dict[str, Any]:
    """Every operation declares the errors every route may answer, in the API's shape.

    Routes declare their own special cases (409, 429, the token exchange's RFC 6749 errors);
    here: 401, 403, 404 and 503 behind a bearer token, 413, 415 and 422 with a body, and 422
    with parameters. FastAPI's own 422 body (``{"detail": [...]}``) is never what we answer,
    so it is replaced. Schemas an ``openapi_extra`` request body brings in ``$defs`` (the
    publish request) move to ``components/schemas`` where every tool resolves them.
    """
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["ErrorOut"] = ErrorOut.model_json_schema()
    ref = {"$ref": "#/components/schemas/ErrorOut"}
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for defs_holder in _request_schemas(operation):
                _hoist_defs(defs_holder, components)
            statuses: set[int] = set()
            if operation.get(OWN_ERRORS):
                continue
            if operation.get(RFC6749_ERRORS):
                if _is_fastapi_validation_error(responses.get("422", {})):
                    del responses["422"]  # a wrong form is a 400 invalid_request there
                statuses |= {413, 503}  # the body cap and the database answer in the API's shape there too
            elif path not in _UNAUTHENTICATED:
                statuses |= {401, 403, 404, 503}
                if "requestBody" in operation:
                    statuses |= {413, 415, 422}
                if operation.get("parameters"):
                    statuses.add(422)
            for status in sorted(statuses):
                current = responses.get(str(status))
                if current is None or _is_fastapi_validation_error(current):
                    responses[str(status)] = {
                        "description": _DESCRIPTIONS[status],
                        "content": {"application/json": {"schema": ref}},
                    }
    for name in ("HTTPValidationError", "ValidationError"):
        if name in components and f'"#/components/schemas/{name}"' not in orjson.dumps(schema).decode():
            del components[name]
    return schema


def _request_schemas(operation: dict[str, Any]) -> list[dict[str, Any]]:
    content = operation.get("requestBody", {}).get("content", {})
    return [media["schema"] for media in content.values() if isinstance(media.get("schema"), dict)]


def _hoist_defs(holder: dict[str, Any], components: dict[str, Any]) -> None:
    defs = holder.pop("$defs", None)
    if not defs:
        return
    rewritten = orjson.loads(
        orjson.dumps({"defs": defs, "holder": holder}).replace(b'"#/$defs/', b'"#/components/schemas/')
    )
    for name, definition in rewritten["defs"].items():
        if components.setdefault(name, definition) != definition:
            raise RuntimeError(f"two different schemas named {name!r} in the OpenAPI document")
    holder.clear()
    holder.update(rewritten["holder"])


def _is_fastapi_validation_error(response: dict[str, Any]) -> bool:
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return bool(schema.get("$ref", "").endswith("/HTTPValidationError"))


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = _document_errors(app, schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.exception_handler(TocsinError)
    async def _tocsin(_request: Request, exc: TocsinError) -> Response:
        return _described(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, exc: RequestValidationError) -> Response:
        return _described(exc)

    @app.exception_handler(ValidationError)
    async def _pydantic(_request: Request, exc: ValidationError) -> Response:
        return _described(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400 and isinstance(exc.__cause__, TocsinError):
            # FastAPI turns any error while it reads the body into a 400; keep ours (413 VAL-002)
            return _described(exc.__cause__)
        if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):
            # FastAPI parses JSON with the standard library, which gives up on very deep nesting
            return json_response(error_body("VAL-001", "request validation failed", NESTED_TOO_DEEP), 422)
        if exc.status_code == 400:
            # FastAPI could not read the body as JSON (bytes that are not UTF-8, for one): invalid body
            return json_response(error_body("VAL-001", "request validation failed", NOT_JSON), 422)
        code = _HTTP_CODES.get(exc.status_code, f"HTTP-{exc.status_code}")
        return json_response(error_body(code, str(exc.detail)), exc.status_code, headers=exc.headers)

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, _exc: ClientDisconnect) -> Response:
        # the client closed the connection before sending its whole request: nobody gets this answer
        log.debug("client disconnected during %s %s", request.method, request.url.path)
        return Response(status_code=400)

    async def _database(request: Request, exc: Exception) -> Response:
        if database_unavailable(exc):
            return _described(exc)
        return await _unexpected(request, exc)

    for database_error in (OperationalError, InterfaceError, DBAPIError, OSError, TimeoutError, PoolTimeout):
        app.add_exception_handler(database_error, _database)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return json_response(UNEXPECTED, 500)
