"""A signed-in person's session, as the API and the console see it (issue 34).

- ``Authorization: Bearer tss_…``: the session's short-lived API access token (api/deps.py hands
  such tokens to :func:`load_session_principal`); permissions are the user's, as for any token.
- The console's cookie ``tocsin_session`` (HttpOnly, Secure, SameSite=Strict): accepted only by the
  sign-in routes and the console; every request that changes something with it carries the
  session's CSRF token (header ``X-CSRF-Token`` or form field ``csrf_token``).

A session is checked against the organization's current authentication policy each time it is
presented: one that no longer satisfies it is ended then (``end_reason: "policy"``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from api.state import ApiState
from app.domain.iam.principal import Principal
from app.domain.iam.signin_policy import session_satisfies
from app.domain.iam.signin_throttle import SignInThrottle
from app.errors import AuthenticationError, PermissionDenied
from app.store import audit, people
from app.store.accounts import load_principal, utcnow
from app.store.models import Account, UserSession

COOKIE = "tocsin_session"
DEVICE_COOKIE = "tocsin_device"
CSRF_HEADER = "x-csrf-token"


async def _checked(session: AsyncSession, row: UserSession | None, *, access: bool) -> tuple[UserSession, Account]:
    if row is None or row.ended_at is not None:
        raise AuthenticationError("AUT-003", "unknown or ended session")
    now = utcnow()
    if row.expires_at <= now or (access and row.access_expires_at <= now):
        raise AuthenticationError("AUT-004", "the session's access token expired; sign in again")
    account = await session.get(Account, row.account_id)
    if account is None or account.status != "ACTIVE":
        raise AuthenticationError("AUT-003", "the session's account is inactive or deleted")
    policy = await people.policy_of(session, row.organization_id)
    if not session_satisfies(policy, row.methods):
        row.ended_at, row.end_reason = now, "policy"
        audit.record_as(
            session,
            row.organization_id,
            ("user_account", row.account_id),
            "session_end",
            "session",
            row.id,
            {"reason": "policy", "methods": row.methods},
        )
        await session.commit()
        raise AuthenticationError(
            "AUT-003", "the session no longer satisfies the organization's authentication policy; sign in again"
        )
    return row, account


async def load_session_principal(state: ApiState, token: str) -> tuple[str, Principal]:
    """The user of a live session whose access token this is (for api/deps.py ``authenticate``)."""
    async with state.sessions() as session:
        row, account = await _checked(session, await people.session_by(session, access_token=token), access=True)
        principal = await load_principal(session, account, token_id=f"ses:{row.id}")
    return principal.organization_id, principal


@dataclass(frozen=True, slots=True)
class Current:
    """The session a request presented, and how (``cookie`` needs the CSRF token to change anything)."""

    row: UserSession
    account: Account
    principal: Principal
    by_cookie: bool


async def current_session(request: Request, session: AsyncSession, *, changes: bool) -> Current:
    """The request's session, by bearer access token or by cookie (then, when ``changes``, the CSRF
    token must match: ``403 IAM-001`` otherwise)."""
    authorization = request.headers.get("authorization", "")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() == "bearer" and token:
        if not token.startswith("tss_"):
            raise AuthenticationError("AUT-003", "this route takes a person's session, not a static or federated token")
        row, account = await _checked(session, await people.session_by(session, access_token=token), access=True)
        by_cookie = False
    else:
        cookie = request.cookies.get(COOKIE)
        if not cookie:
            raise AuthenticationError("AUT-002", "no session: sign in first")
        row, account = await _checked(session, await people.session_by(session, cookie=cookie), access=False)
        by_cookie = True
        if changes:
            await check_csrf(request, row)
    principal = await load_principal(session, account, token_id=f"ses:{row.id}")
    return Current(row, account, principal, by_cookie)


async def check_csrf(request: Request, row: UserSession, form_value: str | None = None) -> None:
    sent = request.headers.get(CSRF_HEADER) or form_value or ""
    if not sent or not secrets.compare_digest(sent.encode(), row.csrf_token.encode()):
        raise PermissionDenied(
            "missing or wrong CSRF token: send the session's csrf_token in X-CSRF-Token", details={"csrf": "refused"}
        )


def throttle(request: Request) -> SignInThrottle:
    """This replica's sign-in throttle (app/domain/iam/signin_throttle.py), made on first use."""
    found: SignInThrottle | None = getattr(request.app.state, "signin_throttle", None)
    if found is None:
        found = SignInThrottle()
        request.app.state.signin_throttle = found
    return found


def client_address(request: Request) -> str:
    """The client's address (api/fastpath.py already put a trusted proxy's forwarded one there)."""
    return request.client.host if request.client else ""
