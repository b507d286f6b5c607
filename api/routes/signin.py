"""People's sign-in, gated by the organization's authentication policy (issue 34; docs/api.md, "Sign-in").

A sign-in is a first factor (password or magic link), then, when the user enrolled a second factor
or the policy enforces MFA, a second step (TOTP, WebAuthn or a recovery code; or the enrolment of
one). A completed sign-in makes a session: a short-lived API access token and the console's
cookie. Wrong credentials of a known and of an unknown user get the same answer in about the same
time; failures are throttled per address and per account (app/domain/iam/signin_throttle.py). Every
sign-in, failure and session end is in the audit log with its method.

Here: the methods an organization offers, the first factor by password, the second step, and TOTP
enrolment. The links sent by e-mail are signin_links.py, the sessions sessions.py, the steps they share
api/signin_flow.py, their bodies api/schemas/signin.py.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from api.deps import SessionDep
from api.errors import error_responses
from api.people_auth import (
    client_address,
    throttle,
)
from api.schemas.signin import (
    ChallengeIn,
    MethodsOut,
    PasswordIn,
    SecondFactorIn,
    SignInOut,
    TotpConfirmedOut,
    TotpConfirmIn,
    TotpEnrolmentOut,
)
from api.signin_flow import (
    PENDING_ATTEMPTS,
    after_first,
    complete,
    consume_step,
    device_key,
    enrolling,
    failure,
    org_exists,
    pending_step,
    require_method,
    use_totp,
)
from app.errors import AuthenticationError, InvalidInput, RateLimited
from app.identity import passwords, totp
from app.store import audit, people
from app.store.accounts import utcnow

router = APIRouter(tags=["sign-in"])


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
    device = await device_key(session, request, body.device_token, account)
    key = limits.account_key(body.organization_id, body.email)
    known_org = await org_exists(session, body.organization_id)
    wait = limits.wait(address, key, device)
    if wait > 0:
        if known_org:
            failure(session, body.organization_id, account, "password", "throttled", address)
            await session.commit()
        raise RateLimited("too many failed sign-ins; wait before trying again", retry_after=wait)
    cred = await people.credentials(session, account.id) if account else None
    if not await passwords.verify_password(cred.password_hash if cred else None, body.password):
        limits.failed(address, key, device)
        if known_org:
            failure(session, body.organization_id, account, "password", "wrong_credentials", address)
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
    pending, account = await pending_step(session, body.challenge, ("pending_2fa",))
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
        failure(session, account.organization_id, account, body.method, "wrong_code", address)
        await session.commit()
        raise AuthenticationError("AUT-003", "wrong or already used code")
    await consume_step(session, body.challenge, ("pending_2fa",))
    limits.succeeded(key, None)
    return await complete(request, response, session, account, [pending.data["first"], body.method], None)


@router.post("/v1/signin/second_factor", response_model=SignInOut, responses=error_responses(429))
async def signin_second_factor(
    request: Request, response: Response, body: SecondFactorIn, session: SessionDep
) -> dict[str, Any]:
    """The second step: a TOTP code (each code once) or a recovery code (each once)."""
    return await second_factor(request, response, session, body)


async def totp_enrolment(request: Request, session: AsyncSession, challenge: str | None) -> dict[str, Any]:
    account, _pending_row = await enrolling(request, session, challenge)
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
    account, pending = await enrolling(request, session, body.challenge)
    policy = await people.policy_of(session, account.organization_id)
    require_method(policy, "totp")
    cred = await people.credentials(session, account.id)
    step = totp.matching_step(cred.totp_pending_secret, body.code, 0) if cred and cred.totp_pending_secret else None
    if cred is None or step is None:
        failure(session, account.organization_id, account, "totp", "wrong_enrolment_code", client_address(request))
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
        await consume_step(session, body.challenge, ("pending_enrol",))
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
