"""The steps every sign-in route shares (api/routes/signin.py, signin_links.py, sessions.py): the
policy's refusals, the failure answer and its throttling, the device token, a pending second step, a
TOTP code used once, and the completed sign-in that makes a session and its cookies."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from api.people_auth import (
    COOKIE,
    DEVICE_COOKIE,
    client_address,
    current_session,
)
from api.state import ApiState
from app.domain.iam.auth_policy import AuthenticationPolicy
from app.domain.iam.signin_policy import after_first_factor, method_enabled
from app.domain.iam.signin_throttle import Backoff, BackoffRule
from app.errors import AuthenticationError, PermissionDenied
from app.identity import totp
from app.identity.session_tokens import (
    ACCESS_TOKEN_SECONDS,
    DEVICE_SECONDS,
    PENDING_SECONDS,
    SESSION_SECONDS,
    secret_hash,
)
from app.store import audit, people
from app.store.models import Account, Organization, UserCredential

PENDING_ATTEMPTS = 5  # wrong codes a pending second step takes before it is used up
POLICY_REFUSED = {
    "password": "password sign-in is turned off by the organization's authentication policy",
    "magic_link": "magic-link sign-in is turned off by the organization's authentication policy",
    "password_reset": "password self-reset is turned off by the organization's authentication policy",
    "totp": "TOTP is turned off by the organization's authentication policy",
    "webauthn": "WebAuthn is turned off by the organization's authentication policy",
    "recovery_code": "recovery codes go with TOTP, which the organization's authentication policy turns off",
}
# sign-in e-mails (magic link, password reset): per address (login_key) and per client address
MAIL_RULE = BackoffRule(free=3, base=60.0, cap=900.0, forget_after=3600.0)


def api_state(request: Request) -> ApiState:
    state: ApiState = request.app.state.tocsin
    return state


def mail_limit(request: Request) -> Backoff:
    found: Backoff | None = getattr(request.app.state, "signin_mail_limit", None)
    if found is None:
        found = Backoff(MAIL_RULE)
        request.app.state.signin_mail_limit = found
    return found


def require_method(policy: AuthenticationPolicy, method: str) -> None:
    if not method_enabled(policy, method):
        raise PermissionDenied(POLICY_REFUSED[method], details={"method": method, "policy": "off"})


async def org_exists(session: AsyncSession, org_id: str) -> bool:
    return await session.get(Organization, org_id) is not None


def failure(
    session: AsyncSession, org_id: str, account: Account | None, method: str, reason: str, address: str
) -> None:
    """A failed attempt in the audit log (never the secret, nor what was typed for an unknown user)."""
    audit.record_as(
        session,
        org_id,
        ("user_account", account.id) if account else ("anonymous", "-"),
        "signin_failure",
        "user",
        account.id if account else "-",
        {"method": method, "reason": reason, "address": address},
    )


async def device_key(session: AsyncSession, request: Request, sent: str | None, account: Account | None) -> str | None:
    """The presented device token's key when an earlier sign-in gave it to this account, else None."""
    plain = sent or request.cookies.get(DEVICE_COOKIE)
    if not plain or account is None:
        return None
    taken = await people.take_one_time(session, plain, ("device",), consume=False)
    if taken.token is None or taken.token.account_id != account.id:
        return None
    return secret_hash(plain)


def set_cookie(response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/", secure=True, httponly=True, samesite="strict")


async def complete(
    request: Request,
    response: Response,
    session: AsyncSession,
    account: Account,
    methods: list[str],
    device_key: str | None,
) -> dict[str, Any]:
    """The session of a completed sign-in, its cookies, the audit entry."""
    address = client_address(request)
    new = await people.create_session(session, account, methods, address, request.headers.get("user-agent", ""))
    device_token = None
    if device_key is None:
        _row, device_token = await people.new_one_time(session, "device", account, DEVICE_SECONDS)
        set_cookie(response, DEVICE_COOKIE, device_token, DEVICE_SECONDS)
    audit.record_as(
        session,
        account.organization_id,
        ("user_account", account.id),
        "signin",
        "user",
        account.id,
        {"method": "+".join(methods), "session_id": new.row.id, "address": address},
    )
    await session.commit()
    set_cookie(response, COOKIE, new.cookie, SESSION_SECONDS)
    return {
        "status": "signed_in",
        "methods": methods,
        "challenge": None,
        "expires_in": None,
        "device_token": device_token,
        "session": {
            "id": new.row.id,
            "account_id": account.id,
            "organization_id": account.organization_id,
            "methods": methods,
            "access_token": new.access_token,
            "token_type": "Bearer",
            "expires_in": ACCESS_TOKEN_SECONDS,
            "session_expires_at": new.row.expires_at.isoformat(),
            "csrf_token": new.row.csrf_token,
        },
    }


async def after_first(
    request: Request,
    response: Response,
    session: AsyncSession,
    policy: AuthenticationPolicy,
    account: Account,
    first: str,
    device_key: str | None,
) -> dict[str, Any]:
    """A first factor passed: a session, or the second step the user (or the policy) asks for."""
    enrolled, codes = await people.enrolled_factors(session, account.id)
    step = after_first_factor(policy, enrolled, codes)
    if step.kind == "refused":
        failure(session, account.organization_id, account, first, "no_second_factor_allowed", client_address(request))
        await session.commit()
        raise PermissionDenied(
            "the organization's authentication policy enforces MFA but allows no second factor",
            details={"policy": "enforce_mfa"},
        )
    if step.kind == "session":
        return await complete(request, response, session, account, [first], device_key)
    kind = "pending_2fa" if step.kind == "second_factor" else "pending_enrol"
    _row, challenge = await people.new_one_time(
        session, kind, account, PENDING_SECONDS, {"first": first, "methods": list(step.methods), "failures": 0}
    )
    await session.commit()
    return {
        "status": "second_factor_required" if kind == "pending_2fa" else "enrolment_required",
        "methods": list(step.methods),
        "challenge": challenge,
        "expires_in": PENDING_SECONDS,
        "session": None,
        "device_token": None,
    }


def step_problem(problem: str | None) -> AuthenticationError:
    if problem == "expired":
        return AuthenticationError("AUT-004", "this sign-in step expired; start again")
    return AuthenticationError("AUT-003", "unknown or used sign-in step; start again")


async def pending_step(session: AsyncSession, challenge: str, kinds: tuple[str, ...]) -> tuple[Any, Account]:
    taken = await people.take_one_time(session, challenge, kinds, consume=False)
    if taken.token is None:
        raise step_problem(taken.problem)
    account = await session.get(Account, taken.token.account_id)
    if account is None or account.status != "ACTIVE":
        raise step_problem("unknown")
    return taken.token, account


async def consume_step(session: AsyncSession, challenge: str, kinds: tuple[str, ...]) -> None:
    taken = await people.take_one_time(session, challenge, kinds)
    if taken.token is None:
        raise step_problem(taken.problem)


async def use_totp(session: AsyncSession, cred: UserCredential, secret: str, code: str) -> bool:
    """The code is right and its time step newer than any used before (recorded atomically: two
    requests with the same code cannot both pass)."""
    step = totp.matching_step(secret, code, cred.totp_last_step)
    if step is None:
        return False
    done = await session.execute(
        update(UserCredential)
        .where(UserCredential.account_id == cred.account_id, UserCredential.totp_last_step < step)
        .values(totp_last_step=step)
        .execution_options(synchronize_session=False)
    )
    if getattr(done, "rowcount", 0) != 1:
        return False
    cred.totp_last_step = step
    return True


async def enrolling(request: Request, session: AsyncSession, challenge: str | None) -> tuple[Account, Any]:
    """The account enrolling: by an enrolment step's challenge, else by the caller's session."""
    if challenge:
        pending, account = await pending_step(session, challenge, ("pending_enrol",))
        return account, pending
    current = await current_session(request, session, changes=True)
    return current.account, None
