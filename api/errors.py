"""The only place errors become HTTP responses: ``{"code", "message", "details"}``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from api.responses import json_response
from app.domain.rate_limit import retry_after_header
from app.domain.workflow import ActionType
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


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details or {}}


def validation_details(errors: list[Any]) -> dict[str, Any]:
    """Failing fields as ``{"fields": [{"loc": "a.b", "msg": ...}]}`` (no input echoed back)."""
    fields = []
    for err in errors:
        # A tagged union (the action types) puts its tag in the location; the caller's path has none.
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body" and p not in _TAGS)
        fields.append({"field": loc, "message": err.get("msg", "invalid"), "type": err.get("type", "")})
    return {"fields": fields}


def describe(exc: Exception) -> tuple[int, dict[str, Any], dict[str, str] | None] | None:
    """Status, JSON body and extra headers of an error the service raises on purpose (else None).

    Shared by the exception handlers below and the publish fast path (api/fastpath.py).
    """
    if isinstance(exc, TocsinError):
        wait = exc.retry_after if isinstance(exc, RateLimited) else 1.0
        headers = {"Retry-After": retry_after_header(wait)} if exc.retriable else None
        return exc.http_status, error_body(exc.code, exc.message, exc.details), headers
    if isinstance(exc, ValidationError | RequestValidationError):
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


def install(app: FastAPI) -> None:
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

    for database_error in (OperationalError, InterfaceError, DBAPIError, ConnectionError):
        app.add_exception_handler(database_error, _database)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return json_response(UNEXPECTED, 500)
