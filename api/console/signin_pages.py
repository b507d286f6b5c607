"""The console's sign-in: each method the organization's policy allows, as forms that work without
JavaScript (password, TOTP or recovery code, magic link, password reset, invitation) and a small
script for WebAuthn (navigator.credentials against the API's ceremonies).

Every step calls the API's own sign-in function (api/routes/signin.py), so the policy, the
throttling, the audit log and the session cookie are the API's. Forms sent before a session
exists carry no CSRF token; a browser's ``Origin`` other than this installation's is refused, and
the session cookie is SameSite=Strict.
"""

from __future__ import annotations

import posixpath
from typing import Any, Literal
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError
from sqlalchemy import func, select

from api.console.render import copy_cookies, form, page, redirect
from api.deps import SessionDep
from api.routes import signin, signin_links
from api.schemas import signin as signin_bodies
from app.errors import PermissionDenied, TocsinError
from app.store import people
from app.store.models import Organization

router = APIRouter(prefix="/console", include_in_schema=False)
HOME = "/console/incidents"


def _next(value: str | None) -> str:
    """Where to go after signing in: a console path only (never another site), its dot segments
    resolved first (``/console/../..//evil.example`` was echoed as given), else the console's home."""
    if not value or "\\" in value or any(c < " " or c == "\x7f" for c in value):
        return HOME
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or any(q in parts.path.lower() for q in ("%2e", "%2f", "%5c")):
        return HOME
    path = posixpath.normpath(parts.path) + ("/" if parts.path.endswith("/") else "")
    if not path.startswith("/console/") or path.startswith("//"):
        return HOME
    return path + (f"?{parts.query}" if parts.query else "")


def _same_origin(request: Request) -> None:
    origin = request.headers.get("origin")
    if origin is None:
        return
    public = urlsplit(request.app.state.tocsin.settings.public_url)
    own = {f"{public.scheme}://{public.netloc}", f"{request.url.scheme}://{request.url.netloc}"}
    if origin not in own:
        raise PermissionDenied("this form was sent from another site", details={"origin": "refused"})


async def _organization(session: SessionDep, given: str | None) -> str:
    """The organization asked for, else the installation's only one (a newcomer's case), else ""."""
    if given:
        return given[:40]
    count = await session.scalar(select(func.count()).select_from(Organization))
    if count == 1:
        return str(await session.scalar(select(Organization.id)))
    return ""


async def _signin_page(
    request: Request, session: SessionDep, org: str, *, status: int = 200, **context: Any
) -> Response:
    methods = await signin.signin_methods(org, session) if org else None
    params = request.query_params
    return page(
        request,
        "signin.html",
        status=status,
        org=org,
        methods=methods,
        next=_next(context.pop("next", None) or params.get("next")),
        email=context.pop("email", None) or params.get("email", ""),
        **context,
    )


def _refusal(exc: TocsinError | ValidationError) -> tuple[int, str]:
    if isinstance(exc, ValidationError):
        return 422, "; ".join(str(e["msg"]) for e in exc.errors()[:3])
    return exc.http_status, exc.message


async def _outcome(request: Request, session: SessionDep, result: dict[str, Any], api: Response, nxt: str) -> Response:
    """A sign-in result as the next page: the console (signed in), the second step or the enrolment."""
    if result["status"] == "signed_in":
        return copy_cookies(api, redirect(nxt))
    if result["status"] == "second_factor_required":
        return page(request, "second.html", challenge=result["challenge"], methods=result["methods"], next=nxt)
    enrolment = None
    if "totp" in result["methods"]:
        enrolment = await signin.totp_enrolment(request, session, result["challenge"])
    return page(
        request, "enrol.html", challenge=result["challenge"], methods=result["methods"], enrolment=enrolment, next=nxt
    )


@router.get("/signin")
async def signin_page(request: Request, session: SessionDep) -> Response:
    return await _signin_page(request, session, await _organization(session, request.query_params.get("org")))


@router.post("/signin/password")
async def signin_password(request: Request, session: SessionDep) -> Response:
    fields = await form(request)
    org, nxt = fields.get("organization_id", ""), _next(fields.get("next"))
    api = Response()
    try:
        _same_origin(request)
        body = signin_bodies.PasswordIn(
            organization_id=org, email=fields.get("email", ""), password=fields.get("password", "")
        )
        result = await signin.password_signin(request, api, session, body)
    except (TocsinError, ValidationError) as exc:
        status, message = _refusal(exc)
        return await _signin_page(
            request, session, org, status=status, error=message, next=nxt, email=fields.get("email", "")
        )
    return await _outcome(request, session, result, api, nxt)


@router.post("/signin/second_factor")
async def signin_second_factor(request: Request, session: SessionDep) -> Response:
    fields = await form(request)
    challenge, nxt = fields.get("challenge", ""), _next(fields.get("next"))
    api = Response()
    try:
        _same_origin(request)
        method: Literal["totp", "recovery_code"] = (
            "recovery_code" if fields.get("method") == "recovery_code" else "totp"
        )
        body = signin_bodies.SecondFactorIn(challenge=challenge, method=method, code=fields.get("code", ""))
        result = await signin.second_factor(request, api, session, body)
    except (TocsinError, ValidationError) as exc:
        status, message = _refusal(exc)
        methods = [m for m in fields.get("methods", "totp").split(",") if m]
        return page(
            request, "second.html", status=status, challenge=challenge, methods=methods, next=nxt, error=message
        )
    return await _outcome(request, session, result, api, nxt)


@router.post("/signin/enrol_totp")
async def signin_enrol_totp(request: Request, session: SessionDep) -> Response:
    """Confirm the TOTP enrolment of an enrolment step: the recovery codes, and the session."""
    fields = await form(request)
    challenge, nxt = fields.get("challenge", ""), _next(fields.get("next"))
    api = Response()
    try:
        _same_origin(request)
        body = signin_bodies.TotpConfirmIn(challenge=challenge, code=fields.get("code", ""))
        done = await signin.totp_confirm(request, api, session, body)
    except (TocsinError, ValidationError) as exc:
        status, message = _refusal(exc)
        return page(request, "error.html", status=status, message=message, code="")
    return copy_cookies(api, page(request, "recovery.html", codes=done["recovery_codes"], next=nxt))


@router.post("/signin/magic_link")
async def signin_magic_link(request: Request, session: SessionDep) -> Response:
    return await _mail_request(request, session, signin_links.request_magic_link)


@router.post("/signin/password_reset")
async def signin_password_reset(request: Request, session: SessionDep) -> Response:
    return await _mail_request(request, session, signin_links.request_reset)


async def _mail_request(request: Request, session: SessionDep, send: Any) -> Response:
    fields = await form(request)
    org = fields.get("organization_id", "")
    try:
        _same_origin(request)
        await send(request, session, signin_bodies.AddressIn(organization_id=org, email=fields.get("email", "")))
    except (TocsinError, ValidationError) as exc:
        status, message = _refusal(exc)
        return await _signin_page(request, session, org, status=status, error=message)
    return page(request, "mail_sent.html", org=org)


@router.get("/signin/link")
async def signin_link_page(request: Request) -> Response:
    """The e-mailed link opens a page whose button uses it: a mail scanner's GET spends nothing."""
    return page(request, "link.html", token=request.query_params.get("token", "")[:100])


@router.post("/signin/link")
async def signin_link(request: Request, session: SessionDep) -> Response:
    fields = await form(request)
    api = Response()
    try:
        _same_origin(request)
        result = await signin_links.verify_magic_link(
            request, api, session, signin_bodies.OneTimeTokenIn(token=fields.get("token", ""))
        )
    except (TocsinError, ValidationError) as exc:
        status, message = _refusal(exc)
        return page(request, "error.html", status=status, message=message, code="")
    return await _outcome(request, session, result, api, HOME)


@router.get("/invitation")
async def invitation_page(request: Request) -> Response:
    return page(
        request, "password.html", token=request.query_params.get("token", "")[:100], action="/console/invitation"
    )


@router.get("/password_reset")
async def reset_page(request: Request) -> Response:
    token = request.query_params.get("token", "")[:100]
    return page(request, "password.html", token=token, action="/console/password_reset")


async def _choose_password(request: Request, session: SessionDep, kind: str, action: str) -> Response:
    fields = await form(request)
    token = fields.get("token", "")
    try:
        _same_origin(request)
        body = signin_bodies.NewPasswordIn(token=token, new_password=fields.get("new_password", ""))
        taken = await people.take_one_time(session, token, (kind,), consume=False)
        await signin_links.set_password(request, session, body, kind, action)
    except (TocsinError, ValidationError) as exc:
        status, message = _refusal(exc)
        path = "/console/invitation" if kind == "invitation" else "/console/password_reset"
        return page(request, "password.html", status=status, token=token, action=path, error=message)
    org = taken.token.organization_id if taken.token else ""
    return await _signin_page(request, session, org, saved=True)


@router.post("/invitation")
async def invitation(request: Request, session: SessionDep) -> Response:
    return await _choose_password(request, session, "invitation", "password_set")


@router.post("/password_reset")
async def password_reset(request: Request, session: SessionDep) -> Response:
    return await _choose_password(request, session, "password_reset", "password_reset")
