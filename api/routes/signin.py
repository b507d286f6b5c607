"""People's sign-in, gated by the organization's authentication policy (issue 34; docs/api.md, "Sign-in").

A sign-in is a first factor (password or magic link), then, when the user enrolled a second factor
or the policy enforces MFA, a second step (TOTP, WebAuthn or a recovery code; or the enrolment of
one). A completed sign-in makes a session: a short-lived API access token and the console's
cookie. Wrong credentials of a known and of an unknown user get the same answer in about the same
time; failures are throttled per address and per account (app/domain/iam/signin_throttle.py). Every
sign-in, failure and session end is in the audit log with its method.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from pydantic import Field
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from api import signin_mail
from api.deps import SessionDep, StateDep, require
from api.errors import error_responses
from api.models import In, Out, Timestamp
from api.pages import Page, page
from api.people_auth import (
    COOKIE,
    DEVICE_COOKIE,
    Current,
    client_address,
    current_session,
    throttle,
)
from api.routes.accounts import ensure_can_become
from api.rows import account_in_org
from api.state import ApiState
from app.domain.iam.auth_policy import AuthenticationPolicy
from app.domain.iam.principal import Principal
from app.domain.iam.signin_policy import after_first_factor, method_enabled, session_satisfies
from app.domain.iam.signin_throttle import Backoff, BackoffRule
from app.errors import AuthenticationError, InvalidInput, NotFound, PermissionDenied, RateLimited
from app.identity import passwords, totp
from app.identity.session_tokens import (
    ACCESS_TOKEN_SECONDS,
    DEVICE_SECONDS,
    INVITATION_SECONDS,
    MAGIC_LINK_SECONDS,
    PENDING_SECONDS,
    SESSION_SECONDS,
    secret_hash,
)
from app.store import audit, people
from app.store.accounts import utcnow
from app.store.models import Account, Organization, UserCredential, UserSession

router = APIRouter(tags=["sign-in"])

PENDING_ATTEMPTS = 5  # wrong codes a pending second step takes before it is used up
POLICY_REFUSED = {
    "password": "password sign-in is turned off by the organization's authentication policy",
    "magic_link": "magic-link sign-in is turned off by the organization's authentication policy",
    "password_reset": "password self-reset is turned off by the organization's authentication policy",
    "totp": "TOTP is turned off by the organization's authentication policy",
    "webauthn": "WebAuthn is turned off by the organization's authentication policy",
    "recovery_code": "recovery codes go with TOTP, which the organization's authentication policy turns off",
}
# sign-in e-mails (magic link, password reset): per typed address and per client address
MAIL_RULE = BackoffRule(free=3, base=60.0, cap=900.0, forget_after=3600.0)


# ---------------------------------------------------------------- shapes


class PasswordIn(In):
    organization_id: str = Field(min_length=1, max_length=40)
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)
    device_token: str | None = Field(
        default=None, max_length=100, description="from an earlier sign-in (else the tocsin_device cookie)"
    )


class SecondFactorIn(In):
    challenge: str = Field(min_length=1, max_length=100)
    method: Literal["totp", "recovery_code"]
    code: str = Field(min_length=1, max_length=40)


class ChallengeIn(In):
    challenge: str | None = Field(
        default=None, max_length=100, description="an enrolment step's challenge; without it, the caller's session"
    )


class TotpConfirmIn(ChallengeIn):
    code: str = Field(min_length=1, max_length=40)


class AddressIn(In):
    organization_id: str = Field(min_length=1, max_length=40)
    email: str = Field(min_length=1, max_length=320)


class OneTimeTokenIn(In):
    token: str = Field(min_length=1, max_length=100)
    device_token: str | None = Field(default=None, max_length=100)


class NewPasswordIn(In):
    token: str = Field(min_length=1, max_length=100)
    new_password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)


class MethodsOut(Out):
    password: bool
    magic_link: bool
    password_reset: bool
    totp: bool
    webauthn: bool
    enforce_mfa: bool


class SessionCreatedOut(Out):
    id: str
    account_id: str
    organization_id: str
    methods: list[str]
    access_token: str = Field(description="the API access token (Bearer); returned only here")
    token_type: Literal["Bearer"]
    expires_in: int = Field(description="seconds the access token lasts")
    session_expires_at: Timestamp
    csrf_token: str = Field(description="send it in X-CSRF-Token with the cookie on every change")


class SignInOut(Out):
    status: Literal["signed_in", "second_factor_required", "enrolment_required"]
    methods: list[str] = Field(description="the second factors to prove (or to enrol); the session's when signed in")
    challenge: str | None = Field(description="the pending step's secret, for the next call")
    expires_in: int | None = Field(description="seconds the challenge lasts")
    session: SessionCreatedOut | None
    device_token: str | None = Field(description="a new device's token: failures of others do not slow it")


class AcceptedOut(Out):
    status: Literal["accepted"]


class TotpEnrolmentOut(Out):
    secret: str
    otpauth_uri: str
    qr_svg: str


class TotpConfirmedOut(Out):
    recovery_codes: list[str] = Field(description="shown only here; each works once")
    signin: SignInOut | None


class SessionOut(Out):
    id: str
    methods: list[str]
    address: str
    user_agent: str
    created_at: Timestamp
    expires_at: Timestamp
    current: bool


class MeOut(Out):
    account_id: str
    organization_id: str
    email: str | None
    display_name: str
    session_id: str
    methods: list[str]
    csrf_token: str | None


class RefreshedOut(Out):
    access_token: str
    token_type: Literal["Bearer"]
    expires_in: int


class InvitationOut(Out):
    url: str
    token: str
    expires_at: Timestamp


# ---------------------------------------------------------------- helpers


def _state(request: Request) -> ApiState:
    state: ApiState = request.app.state.tocsin
    return state


def _mail_limit(request: Request) -> Backoff:
    found: Backoff | None = getattr(request.app.state, "signin_mail_limit", None)
    if found is None:
        found = Backoff(MAIL_RULE)
        request.app.state.signin_mail_limit = found
    return found


def require_method(policy: AuthenticationPolicy, method: str) -> None:
    if not method_enabled(policy, method):
        raise PermissionDenied(POLICY_REFUSED[method], details={"method": method, "policy": "off"})


async def _org_exists(session: AsyncSession, org_id: str) -> bool:
    return await session.get(Organization, org_id) is not None


def _failure(
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


async def _device_key(session: AsyncSession, request: Request, sent: str | None, account: Account | None) -> str | None:
    """The presented device token's key when an earlier sign-in gave it to this account, else None."""
    plain = sent or request.cookies.get(DEVICE_COOKIE)
    if not plain or account is None:
        return None
    taken = await people.take_one_time(session, plain, ("device",), consume=False)
    if taken.token is None or taken.token.account_id != account.id:
        return None
    return secret_hash(plain)


def _set_cookie(response: Response, name: str, value: str, max_age: int) -> None:
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
        _set_cookie(response, DEVICE_COOKIE, device_token, DEVICE_SECONDS)
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
    _set_cookie(response, COOKIE, new.cookie, SESSION_SECONDS)
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
        _failure(session, account.organization_id, account, first, "no_second_factor_allowed", client_address(request))
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


def _step_problem(problem: str | None) -> AuthenticationError:
    if problem == "expired":
        return AuthenticationError("AUT-004", "this sign-in step expired; start again")
    return AuthenticationError("AUT-003", "unknown or used sign-in step; start again")


async def _pending(session: AsyncSession, challenge: str, kinds: tuple[str, ...]) -> tuple[Any, Account]:
    taken = await people.take_one_time(session, challenge, kinds, consume=False)
    if taken.token is None:
        raise _step_problem(taken.problem)
    account = await session.get(Account, taken.token.account_id)
    if account is None or account.status != "ACTIVE":
        raise _step_problem("unknown")
    return taken.token, account


async def _consume(session: AsyncSession, challenge: str, kinds: tuple[str, ...]) -> None:
    taken = await people.take_one_time(session, challenge, kinds)
    if taken.token is None:
        raise _step_problem(taken.problem)


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


# ---------------------------------------------------------------- routes


@router.get("/v1/organizations/{org_id}/signin_methods", response_model=MethodsOut)
async def signin_methods(org_id: str, session: SessionDep) -> dict[str, Any]:
    """What the organization's policy allows (no authentication: the sign-in page reads it)."""
    policy = await people.policy_of(session, org_id)
    return {
        "password": policy.password_login_enabled,
        "magic_link": policy.magic_link_enabled,
        "password_reset": policy.password_self_reset_enabled,
        "totp": policy.totp_enabled,
        "webauthn": policy.webauthn_enabled,
        "enforce_mfa": policy.enforce_mfa,
    }


async def password_signin(
    request: Request, response: Response, session: AsyncSession, body: PasswordIn
) -> dict[str, Any]:
    policy = await people.policy_of(session, body.organization_id)
    require_method(policy, "password")
    address = client_address(request)
    limits = throttle(request)
    account = await people.find_user(session, body.organization_id, body.email)
    device = await _device_key(session, request, body.device_token, account)
    key = limits.account_key(body.organization_id, body.email)
    known_org = await _org_exists(session, body.organization_id)
    wait = limits.wait(address, key, device)
    if wait > 0:
        if known_org:
            _failure(session, body.organization_id, account, "password", "throttled", address)
            await session.commit()
        raise RateLimited("too many failed sign-ins; wait before trying again", retry_after=wait)
    cred = await people.credentials(session, account.id) if account else None
    if not await passwords.verify_password(cred.password_hash if cred else None, body.password):
        limits.failed(address, key, device)
        if known_org:
            _failure(session, body.organization_id, account, "password", "wrong_credentials", address)
            await session.commit()
        raise AuthenticationError("AUT-003", "wrong e-mail or password")
    assert account is not None  # a password matched
    limits.succeeded(key, device)
    return await after_first(request, response, session, policy, account, "password", device)


@router.post("/v1/signin/password", response_model=SignInOut, responses=error_responses(429))
async def signin_password(
    request: Request, response: Response, body: PasswordIn, session: SessionDep
) -> dict[str, Any]:
    """E-mail and password: a session, or the second step to take."""
    return await password_signin(request, response, session, body)


async def second_factor(
    request: Request, response: Response, session: AsyncSession, body: SecondFactorIn
) -> dict[str, Any]:
    pending, account = await _pending(session, body.challenge, ("pending_2fa",))
    policy = await people.policy_of(session, account.organization_id)
    require_method(policy, body.method)
    if body.method not in pending.data.get("methods", []):
        raise InvalidInput(
            "this sign-in step takes another method",
            details={"fields": [{"field": "method", "message": f"one of {pending.data.get('methods')}"}]},
        )
    address = client_address(request)
    limits = throttle(request)
    key = ("second_factor", account.id)
    wait = limits.wait(address, key, None)
    if wait > 0:
        raise RateLimited("too many wrong codes; wait before trying again", retry_after=wait)
    cred = await people.credentials(session, account.id)
    ok = False
    if cred is not None and body.method == "totp" and cred.totp_secret:
        ok = await use_totp(session, cred, cred.totp_secret, body.code)
    elif cred is not None and body.method == "recovery_code":
        hashed = totp.recovery_hash(body.code)
        if hashed in cred.recovery_code_hashes:
            cred.recovery_code_hashes = [h for h in cred.recovery_code_hashes if h != hashed]
            ok = True
    if not ok:
        limits.failed(address, key, None)
        failures = int(pending.data.get("failures", 0)) + 1
        pending.data = {**pending.data, "failures": failures}
        if failures >= PENDING_ATTEMPTS:
            pending.used_at = utcnow()
        _failure(session, account.organization_id, account, body.method, "wrong_code", address)
        await session.commit()
        raise AuthenticationError("AUT-003", "wrong or already used code")
    await _consume(session, body.challenge, ("pending_2fa",))
    limits.succeeded(key, None)
    return await complete(request, response, session, account, [pending.data["first"], body.method], None)


@router.post("/v1/signin/second_factor", response_model=SignInOut, responses=error_responses(429))
async def signin_second_factor(
    request: Request, response: Response, body: SecondFactorIn, session: SessionDep
) -> dict[str, Any]:
    """The second step: a TOTP code (each code once) or a recovery code (each once)."""
    return await second_factor(request, response, session, body)


async def _enrolling(request: Request, session: AsyncSession, challenge: str | None) -> tuple[Account, Any]:
    """The account enrolling: by an enrolment step's challenge, else by the caller's session."""
    if challenge:
        pending, account = await _pending(session, challenge, ("pending_enrol",))
        return account, pending
    current = await current_session(request, session, changes=True)
    return current.account, None


async def totp_enrolment(request: Request, session: AsyncSession, challenge: str | None) -> dict[str, Any]:
    account, _pending_row = await _enrolling(request, session, challenge)
    policy = await people.policy_of(session, account.organization_id)
    require_method(policy, "totp")
    cred = await people.credentials(session, account.id, create=True)
    assert cred is not None
    cred.totp_pending_secret = totp.new_secret()
    await session.commit()
    uri = totp.provisioning_uri(cred.totp_pending_secret, account.email or account.name)
    return {"secret": cred.totp_pending_secret, "otpauth_uri": uri, "qr_svg": totp.qr_svg(uri)}


@router.post("/v1/signin/totp_enrolment", response_model=TotpEnrolmentOut)
async def signin_totp_enrolment(request: Request, body: ChallengeIn, session: SessionDep) -> dict[str, Any]:
    """Start (or restart) a TOTP enrolment: the secret as an ``otpauth://`` URI and a QR code."""
    return await totp_enrolment(request, session, body.challenge)


async def totp_confirm(
    request: Request, response: Response, session: AsyncSession, body: TotpConfirmIn
) -> dict[str, Any]:
    account, pending = await _enrolling(request, session, body.challenge)
    policy = await people.policy_of(session, account.organization_id)
    require_method(policy, "totp")
    cred = await people.credentials(session, account.id)
    step = totp.matching_step(cred.totp_pending_secret, body.code, 0) if cred and cred.totp_pending_secret else None
    if cred is None or step is None:
        _failure(session, account.organization_id, account, "totp", "wrong_enrolment_code", client_address(request))
        await session.commit()
        raise AuthenticationError("AUT-003", "wrong code: enter the code the authenticator app shows now")
    codes = totp.new_recovery_codes()
    cred.totp_secret, cred.totp_pending_secret, cred.totp_last_step = cred.totp_pending_secret, None, step
    cred.recovery_code_hashes = [totp.recovery_hash(c) for c in codes]
    audit.record_as(
        session, account.organization_id, ("user_account", account.id), "totp_enrol", "user", account.id, {}
    )
    signin = None
    if pending is not None and body.challenge:
        await _consume(session, body.challenge, ("pending_enrol",))
        signin = await complete(request, response, session, account, [pending.data["first"], "totp"], None)
    else:
        await session.commit()
    return {"recovery_codes": codes, "signin": signin}


@router.post("/v1/signin/totp_enrolment:confirm", response_model=TotpConfirmedOut)
async def signin_totp_confirm(
    request: Request, response: Response, body: TotpConfirmIn, session: SessionDep
) -> dict[str, Any]:
    """Confirm the enrolment with a current code: the recovery codes (shown once); with an enrolment
    step's challenge, the sign-in completes too."""
    return await totp_confirm(request, response, session, body)


async def _send_magic_link(state: ApiState, org_id: str, email: str) -> None:
    async with state.sessions() as session:
        account = await people.find_user(session, org_id, email)
        if account is None or not account.email:
            return
        await people.retire_one_time(session, account.id, "magic_link")
        _row, token = await people.new_one_time(session, "magic_link", account, MAGIC_LINK_SECONDS)
        audit.record_as(session, org_id, ("user_account", account.id), "signin_link_sent", "user", account.id, {})
        await session.commit()
        to = account.email
    url = signin_mail.link(state.settings, "/console/signin/link", token)
    body = (
        f"Sign in to Tocsin with this link (it works once, for {MAGIC_LINK_SECONDS // 60} minutes):\n\n{url}\n\n"
        "If you did not ask for it, ignore this e-mail."
    )
    await signin_mail.send(state.settings, to, "Your Tocsin sign-in link", body)


def _mail_throttle(request: Request, org_id: str, email: str) -> None:
    limit = _mail_limit(request)
    keys = [("mail", org_id, email.lower()), ("mail-address", client_address(request))]
    wait = max(limit.wait(k) for k in keys)
    if wait > 0:
        raise RateLimited("too many sign-in e-mails asked for; wait before asking again", retry_after=wait)
    for k in keys:
        limit.failed(k)


async def request_magic_link(request: Request, session: AsyncSession, body: AddressIn) -> dict[str, Any]:
    require_method(await people.policy_of(session, body.organization_id), "magic_link")
    _mail_throttle(request, body.organization_id, str(body.email))
    signin_mail.later(_send_magic_link(_state(request), body.organization_id, str(body.email)))
    return {"status": "accepted"}


@router.post("/v1/signin/magic_link", status_code=202, response_model=AcceptedOut, responses=error_responses(429))
async def signin_magic_link(request: Request, body: AddressIn, session: SessionDep) -> dict[str, Any]:
    """E-mail a single-use sign-in link to the user with this address, if there is one (the same
    answer either way)."""
    return await request_magic_link(request, session, body)


async def verify_magic_link(
    request: Request, response: Response, session: AsyncSession, body: OneTimeTokenIn
) -> dict[str, Any]:
    taken = await people.take_one_time(session, body.token, ("magic_link",), consume=False)
    if taken.token is None:
        raise _step_problem(taken.problem)
    account = await session.get(Account, taken.token.account_id)
    if account is None or account.status != "ACTIVE":
        raise _step_problem("unknown")
    policy = await people.policy_of(session, account.organization_id)
    require_method(policy, "magic_link")
    await _consume(session, body.token, ("magic_link",))
    device = await _device_key(session, request, body.device_token, account)
    return await after_first(request, response, session, policy, account, "magic_link", device)


@router.post("/v1/signin/magic_link:verify", response_model=SignInOut)
async def signin_magic_link_verify(
    request: Request, response: Response, body: OneTimeTokenIn, session: SessionDep
) -> dict[str, Any]:
    """Use a magic link's token (once): a session, or the second step to take."""
    return await verify_magic_link(request, response, session, body)


async def _send_reset(state: ApiState, org_id: str, email: str) -> None:
    async with state.sessions() as session:
        policy = await people.policy_of(session, org_id)
        account = await people.find_user(session, org_id, email)
        if account is None or not account.email:
            return
        await people.retire_one_time(session, account.id, "password_reset")
        seconds = policy.password_reset_token_expires_in_seconds
        _row, token = await people.new_one_time(session, "password_reset", account, seconds)
        audit.record_as(session, org_id, ("user_account", account.id), "password_reset_sent", "user", account.id, {})
        await session.commit()
        to = account.email
    url = signin_mail.link(state.settings, "/console/password_reset", token)
    body = (
        f"Choose a new Tocsin password with this link (it works once, for {seconds} seconds):\n\n{url}\n\n"
        "If you did not ask for it, ignore this e-mail: your password stays as it is."
    )
    await signin_mail.send(state.settings, to, "Reset your Tocsin password", body)


async def request_reset(request: Request, session: AsyncSession, body: AddressIn) -> dict[str, Any]:
    require_method(await people.policy_of(session, body.organization_id), "password_reset")
    _mail_throttle(request, body.organization_id, str(body.email))
    signin_mail.later(_send_reset(_state(request), body.organization_id, str(body.email)))
    return {"status": "accepted"}


@router.post("/v1/signin/password_reset", status_code=202, response_model=AcceptedOut, responses=error_responses(429))
async def signin_password_reset(request: Request, body: AddressIn, session: SessionDep) -> dict[str, Any]:
    """E-mail a password-reset link (valid for the policy's ``password_reset_token_expires_in_seconds``)
    to the user with this address, if there is one (the same answer either way)."""
    return await request_reset(request, session, body)


async def _set_password(request: Request, session: AsyncSession, body: NewPasswordIn, kind: str, action: str) -> None:
    if problem := passwords.password_problem(body.new_password):
        raise InvalidInput("password refused", details={"fields": [{"field": "new_password", "message": problem}]})
    taken = await people.take_one_time(session, body.token, (kind,), consume=False)
    if taken.token is None:
        raise _step_problem(taken.problem)
    account = await session.get(Account, taken.token.account_id)
    if account is None or account.status != "ACTIVE":
        raise _step_problem("unknown")
    if kind == "password_reset":
        require_method(await people.policy_of(session, account.organization_id), "password_reset")
    await _consume(session, body.token, (kind,))
    cred = await people.credentials(session, account.id, create=True)
    assert cred is not None
    cred.password_hash = await passwords.hash_password_async(body.new_password)
    cred.password_changed_at = utcnow()
    ended = await people.end_sessions(session, account.id, action)
    for other in ("password_reset", "magic_link", "pending_2fa", "pending_enrol"):
        await people.retire_one_time(session, account.id, other)
    audit.record_as(
        session,
        account.organization_id,
        ("user_account", account.id),
        action,
        "user",
        account.id,
        {"sessions_ended": len(ended), "address": client_address(request)},
    )
    await session.commit()
    await _state(request).config_changed(account.organization_id, "session")


@router.post("/v1/signin/password_reset:confirm", status_code=204)
async def signin_password_reset_confirm(request: Request, body: NewPasswordIn, session: SessionDep) -> Response:
    """Set a new password with a reset link's token (once); every session of the user ends."""
    await _set_password(request, session, body, "password_reset", "password_reset")
    return Response(status_code=204)


@router.post("/v1/signin/invitation:accept", status_code=204)
async def signin_invitation_accept(request: Request, body: NewPasswordIn, session: SessionDep) -> Response:
    """Set a password with an invitation's token (once): the bootstrap's or an administrator's link."""
    await _set_password(request, session, body, "invitation", "password_set")
    return Response(status_code=204)


async def invite(session: AsyncSession, settings_url: str, account: Account) -> dict[str, Any]:
    """A one-time link that lets ``account`` choose a password (the bootstrap's, an administrator's)."""
    await people.retire_one_time(session, account.id, "invitation")
    row, token = await people.new_one_time(session, "invitation", account, INVITATION_SECONDS)
    return {
        "url": f"{settings_url.rstrip('/')}/console/invitation?token={token}",
        "token": token,
        "expires_at": row.expires_at.isoformat(),
    }


@router.post(
    "/v1/organizations/{org_id}/users/{account_id}/signin_invitation", status_code=201, response_model=InvitationOut
)
async def create_invitation(
    org_id: str,
    account_id: str,
    request: Request,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.user:update", "users/{account_id}"))],
) -> dict[str, Any]:
    """A one-time link for the user to choose a password (for 7 days); the act-as guard applies: the
    caller must hold every permission the user has."""
    account = await account_in_org(session, org_id, account_id, "user_account")
    await ensure_can_become(session, principal, account, "invite")
    out = await invite(session, state.settings.public_url, account)
    audit.record(session, principal, "invite", "user", account.id, {})
    await session.commit()
    return out


def _session_out(row: UserSession, current_id: str) -> dict[str, Any]:
    return {
        "id": row.id,
        "methods": row.methods,
        "address": row.address,
        "user_agent": row.user_agent,
        "created_at": row.created_at.isoformat(),
        "expires_at": row.expires_at.isoformat(),
        "current": row.id == current_id,
    }


async def end_one(request: Request, session: AsyncSession, current: Current, row: UserSession, reason: str) -> None:
    row.ended_at, row.end_reason = utcnow(), reason
    audit.record_as(
        session,
        row.organization_id,
        ("user_account", current.account.id),
        "session_end",
        "session",
        row.id,
        {"reason": reason, "methods": row.methods},
    )
    await session.commit()
    await _state(request).config_changed(row.organization_id, "session")


@router.get("/v1/me", response_model=MeOut)
async def me(request: Request, session: SessionDep) -> dict[str, Any]:
    """The signed-in person (by session access token or cookie)."""
    current = await current_session(request, session, changes=False)
    return {
        "account_id": current.account.id,
        "organization_id": current.account.organization_id,
        "email": current.account.email,
        "display_name": current.account.name,
        "session_id": current.row.id,
        "methods": current.row.methods,
        "csrf_token": current.row.csrf_token if current.by_cookie else None,
    }


@router.get("/v1/sessions", response_model=Page[SessionOut])
async def list_sessions(request: Request, session: SessionDep) -> Page[Any]:
    """The caller's live sessions; one that no longer satisfies the policy is ended, not listed."""
    current = await current_session(request, session, changes=False)
    policy = await people.policy_of(session, current.account.organization_id)
    rows = []
    for row in await people.live_sessions(session, current.account.id):
        if session_satisfies(policy, row.methods):
            rows.append(row)
        else:
            row.ended_at, row.end_reason = utcnow(), "policy"
    await session.commit()
    return page([_session_out(r, current.row.id) for r in rows], None)


@router.delete("/v1/sessions/{session_id}", status_code=204)
async def revoke_session(session_id: str, request: Request, session: SessionDep) -> Response:
    """End one of the caller's sessions (its access token and cookie stop working at once)."""
    current = await current_session(request, session, changes=True)
    row = await session.get(UserSession, session_id)
    if row is None or row.account_id != current.account.id or row.ended_at is not None:
        raise NotFound("session not found")
    await end_one(request, session, current, row, "revoked")
    return Response(status_code=204)


@router.post("/v1/signout", status_code=204)
async def signout(request: Request, session: SessionDep) -> Response:
    """End the caller's session and clear its cookie."""
    current = await current_session(request, session, changes=True)
    await end_one(request, session, current, current.row, "signout")
    response = Response(status_code=204)
    response.delete_cookie(COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return response


@router.post("/v1/sessions/current:refresh", response_model=RefreshedOut)
async def refresh(request: Request, session: SessionDep) -> dict[str, Any]:
    """A new API access token for the session (the previous one stops working); with the cookie,
    the CSRF token is needed."""
    current = await current_session(request, session, changes=True)
    access = await people.renew_access_token(session, current.row)
    await session.commit()
    await _state(request).config_changed(current.account.organization_id, "session")
    return {"access_token": access, "token_type": "Bearer", "expires_in": ACCESS_TOKEN_SECONDS}
