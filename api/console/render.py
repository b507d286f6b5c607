"""What every console page shares: the templates, the person signed in (by the session cookie of
api/people_auth.py), form bodies, the CSRF check of a form, HTML error pages and the headers that
keep the pages to themselves (a Content-Security-Policy that allows only the console's own script)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlalchemy.ext.asyncio import AsyncSession

from api.console.i18n import language, translator
from api.deps import authorize
from api.people_auth import Current, check_csrf, current_session
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import coverable, organization_name
from app.errors import AuthenticationError, NotFound, TocsinError, UnsupportedMediaType

HERE = Path(__file__).parent
MAX_FORM_BYTES = 64 * 1024
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    # one-time tokens travel in the query of e-mailed links: never to another site; not "no-referrer",
    # with which browsers send "Origin: null" on a form and the sign-in forms could not check theirs
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

templates = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def lang_of(request: Request) -> str:
    return language(request.headers.get("accept-language", ""))


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    lang = lang_of(request)
    html = templates.get_template(template).render(lang=lang, t=translator(lang), **context)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def redirect(url: str) -> RedirectResponse:
    """303: a form's POST is followed by a GET of the page to show."""
    return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)


def signin_url(request: Request) -> str:
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return f"/console/signin?next={quote(back, safe='')}"


async def form(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body, each field's first value (415 for another type:
    the console's routes are exempt from the API's JSON-only check, api/body.py)."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        raise UnsupportedMediaType("a console form is sent as application/x-www-form-urlencoded")
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise TocsinError("form too large")
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=50)
    return {k: v[0] for k, v in fields.items()}


async def signed_in(request: Request, session: AsyncSession, csrf: str | None = None) -> Current:
    """The person of the cookie; with ``csrf`` (a form's field), the session's CSRF token must match."""
    current = await current_session(request, session, changes=False)
    if csrf is not None:
        await check_csrf(request, current.row, csrf)
    return current


def with_csrf(request: Request, current: Current) -> Request:
    """The request as the API's session functions expect a change to come: with the session's CSRF
    token in its header (the form's field was checked already by :func:`signed_in`)."""
    headers = [(k, v) for k, v in request.scope["headers"] if k != b"x-csrf-token"]
    scope = {**request.scope, "headers": [*headers, (b"x-csrf-token", current.row.csrf_token.encode())]}
    return Request(scope, request.receive)


def allowed(principal: Principal, permission: str, resource: str | None = None) -> None:
    """The API's own check (api/deps.py ``authorize``) in the person's organization: 403 without the
    permission on ``organization/resource``."""
    org = principal.organization_id
    name = organization_name(org) + (f":{resource}" if resource else "")
    if not coverable(name):  # as api/deps.py require: no resource has such an id
        raise NotFound("not found")
    authorize(principal, org, permission, name)


def can(principal: Principal, permission: str, resource: str) -> bool:
    return principal.can(permission, f"{organization_name(principal.organization_id)}:{resource}")


def error_page(request: Request, exc: TocsinError) -> Response:
    if isinstance(exc, AuthenticationError) and request.method == "GET":
        return redirect(signin_url(request))
    return page(request, "error.html", status=exc.http_status, message=exc.message, code=exc.code)


def guarded(
    handler: Callable[..., Awaitable[Response]],
) -> Callable[..., Awaitable[Response]]:
    """A page handler whose refusals (not signed in, a missing permission, not found) are pages."""

    @functools.wraps(handler)  # FastAPI reads the handler's signature through __wrapped__
    async def wrapper(*args: Any, **kwargs: Any) -> Response:
        try:
            return await handler(*args, **kwargs)
        except TocsinError as exc:
            request = kwargs.get("request") or next(a for a in args if isinstance(a, Request))
            return error_page(request, exc)

    return wrapper


def copy_cookies(source: Response, target: Response) -> Response:
    """The cookies an API function set on ``source`` (the session's, the device's), onto ``target``."""
    for name, value in source.raw_headers:
        if name.lower() == b"set-cookie":
            target.raw_headers.append((name, value))
    return target
