"""WebAuthn as a second factor (issue 34; docs/api.md, "WebAuthn"): registration and authentication
ceremonies, several authenticators per user, the sign counter checked, all gated by the
organization's ``webauthn_enabled``.

- Registration: ``…/webauthn/registration:options`` gives ``navigator.credentials.create``'s options
  and a ``ceremony`` token (the challenge, kept server-side, used once); ``…:verify`` takes the
  browser's answer. It runs with the caller's session (cookie + CSRF, or the session's bearer token)
  or, when ``enforce_mfa`` leads a user to enrol, with the enrolment step's challenge: then the
  sign-in completes with ``[first factor, "webauthn"]``.
- Authentication: after a first factor whose step lists ``webauthn``, ``…/webauthn/authentication:options``
  gives ``navigator.credentials.get``'s options for the user's authenticators, ``…:verify`` the
  session. A sign counter that does not grow is refused (``reason: sign_count_regression`` in the
  audit log): a cloned authenticator or a replayed answer.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import Field
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from api.deps import SessionDep
from api.errors import error_responses
from api.models import In, Out, Timestamp
from api.pages import Page, page
from api.people_auth import client_address, current_session, throttle
from api.schemas.signin import SignInOut
from api.signin_flow import (
    PENDING_ATTEMPTS,
    api_state,
    complete,
    consume_step,
    enrolling,
    failure,
    pending_step,
    require_method,
)
from app.domain.shared.ids import new_id
from app.errors import AuthenticationError, Conflict, InvalidInput, NotFound, RateLimited
from app.identity import webauthn_ceremony as ceremony
from app.identity.session_tokens import PENDING_SECONDS
from app.store import audit, people
from app.store.accounts import utcnow
from app.store.models import Account, WebAuthnCredential

router = APIRouter(tags=["sign-in"])

CEREMONY_KIND = "webauthn_reg"  # signin_tokens.kind holds 20 characters


class RegistrationOptionsIn(In):
    challenge: str | None = Field(
        default=None, max_length=100, description="an enrolment step's challenge; without it, the caller's session"
    )


class OptionsOut(Out):
    ceremony: str | None = Field(description="send it back with the answer (registration only); works once")
    expires_in: int
    public_key: dict[str, Any] = Field(
        description="the options for navigator.credentials.create/get, in the WebAuthn JSON form (base64url)"
    )


class RegistrationIn(In):
    ceremony: str = Field(min_length=1, max_length=100)
    challenge: str | None = Field(default=None, max_length=100, description="the enrolment step's, if enrolling")
    name: str = Field(default="", max_length=200, description="the person's name for this authenticator")
    credential: dict[str, Any] = Field(description="the PublicKeyCredential as JSON (id, rawId, response, type)")


class AuthenticatorOut(Out):
    id: str
    name: str
    sign_count: int
    created_at: Timestamp
    last_used_at: Timestamp | None


class RegisteredOut(Out):
    authenticator: AuthenticatorOut
    signin: SignInOut | None = Field(description="the completed sign-in when this was an enrolment step")


class AssertionIn(In):
    challenge: str = Field(min_length=1, max_length=100, description="the pending second step's challenge")
    credential: dict[str, Any] = Field(description="the PublicKeyCredential as JSON (id, rawId, response, type)")


class AssertionOptionsIn(In):
    challenge: str = Field(min_length=1, max_length=100)


def _rp(request: Request) -> ceremony.RelyingParty:
    return ceremony.RelyingParty.of(api_state(request).settings.public_url)


def _out(row: WebAuthnCredential) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "sign_count": row.sign_count,
        "created_at": row.created_at.isoformat(),
        "last_used_at": row.last_used_at.isoformat() if row.last_used_at else None,
    }


# ---------------------------------------------------------------- registration


@router.post("/v1/signin/webauthn/registration:options", response_model=OptionsOut)
async def registration_options(request: Request, body: RegistrationOptionsIn, session: SessionDep) -> dict[str, Any]:
    """Start registering an authenticator (one more: a user may have several)."""
    account, _pending_row = await enrolling(request, session, body.challenge)
    require_method(await people.policy_of(session, account.organization_id), "webauthn")
    existing = [c.credential_id for c in await people.webauthn_credentials(session, account.id)]
    options, challenge = ceremony.registration_options(
        _rp(request), account.id, account.email or account.name, account.name, existing
    )
    await people.retire_one_time(session, account.id, CEREMONY_KIND)
    _row, token = await people.new_one_time(session, CEREMONY_KIND, account, PENDING_SECONDS, {"challenge": challenge})
    await session.commit()
    return {"ceremony": token, "expires_in": PENDING_SECONDS, "public_key": options}


async def _register(
    request: Request, response: Response, session: AsyncSession, body: RegistrationIn
) -> dict[str, Any]:
    account, pending = await enrolling(request, session, body.challenge)
    require_method(await people.policy_of(session, account.organization_id), "webauthn")
    taken = await people.take_one_time(session, body.ceremony, (CEREMONY_KIND,))
    if taken.token is None or taken.token.account_id != account.id:
        raise AuthenticationError("AUT-003", "unknown, used or expired registration ceremony; start again")
    try:
        done = ceremony.verify_registration(_rp(request), body.credential, str(taken.token.data["challenge"]))
    except ceremony.CeremonyFailed as exc:
        failure(session, account.organization_id, account, "webauthn", "registration_refused", client_address(request))
        await session.commit()
        raise InvalidInput(
            "the authenticator's answer does not verify",
            details={"fields": [{"field": "credential", "message": str(exc)}]},
        ) from exc
    clash = await session.scalar(
        select(WebAuthnCredential.id).where(WebAuthnCredential.credential_id == done.credential_id)
    )
    if clash is not None:
        raise Conflict("this authenticator is registered already")
    row = WebAuthnCredential(
        id=new_id("wac"),
        account_id=account.id,
        credential_id=done.credential_id,
        public_key=done.public_key,
        sign_count=done.sign_count,
        name=body.name or "authenticator",
        created_at=utcnow(),
        last_used_at=None,
    )
    session.add(row)
    audit.record_as(
        session,
        account.organization_id,
        ("user_account", account.id),
        "webauthn_enrol",
        "user",
        account.id,
        {"authenticator_id": row.id},
    )
    signin = None
    if pending is not None and body.challenge:
        await consume_step(session, body.challenge, ("pending_enrol",))
        signin = await complete(request, response, session, account, [pending.data["first"], "webauthn"], None)
    else:
        await session.commit()
    return {"authenticator": _out(row), "signin": signin}


@router.post(
    "/v1/signin/webauthn/registration:verify",
    status_code=201,
    response_model=RegisteredOut,
    responses=error_responses(409),
)
async def registration_verify(
    request: Request, response: Response, body: RegistrationIn, session: SessionDep
) -> dict[str, Any]:
    """Finish the registration with the browser's answer (attestation ``none`` is enough); with an
    enrolment step's challenge, the sign-in completes too."""
    return await _register(request, response, session, body)


# ---------------------------------------------------------------- authentication


async def _webauthn_step(request: Request, session: AsyncSession, challenge: str) -> tuple[Any, Account]:
    pending, account = await pending_step(session, challenge, ("pending_2fa",))
    require_method(await people.policy_of(session, account.organization_id), "webauthn")
    if "webauthn" not in pending.data.get("methods", []):
        raise InvalidInput(
            "this sign-in step takes another method",
            details={"fields": [{"field": "challenge", "message": f"one of {pending.data.get('methods')}"}]},
        )
    return pending, account


@router.post("/v1/signin/webauthn/authentication:options", response_model=OptionsOut)
async def authentication_options(request: Request, body: AssertionOptionsIn, session: SessionDep) -> dict[str, Any]:
    """The second step by WebAuthn: options for any of the user's authenticators (a new call
    replaces the previous challenge)."""
    pending, account = await _webauthn_step(request, session, body.challenge)
    allowed = [c.credential_id for c in await people.webauthn_credentials(session, account.id)]
    options, challenge = ceremony.authentication_options(_rp(request), allowed)
    pending.data = {**pending.data, "webauthn_challenge": challenge}
    await session.commit()
    left = max(0, int((pending.expires_at - utcnow()).total_seconds()))
    return {"ceremony": None, "expires_in": left, "public_key": options}


async def _assert(request: Request, response: Response, session: AsyncSession, body: AssertionIn) -> dict[str, Any]:
    pending, account = await _webauthn_step(request, session, body.challenge)
    address = client_address(request)
    limits = throttle(request)
    key = ("second_factor", account.id)
    wait = limits.wait(address, key, None)
    if wait > 0:
        raise RateLimited("too many failed second steps; wait before trying again", retry_after=wait)
    expected = pending.data.get("webauthn_challenge")
    credential_id = ceremony.credential_id_of(body.credential)
    row = None
    if credential_id:
        row = await session.scalar(
            select(WebAuthnCredential).where(
                WebAuthnCredential.credential_id == credential_id, WebAuthnCredential.account_id == account.id
            )
        )
    reason, new_count = "", 0
    if not expected or row is None:
        reason = "unknown_authenticator" if expected else "no_options_asked"
    else:
        try:
            new_count = ceremony.verify_authentication(
                _rp(request), body.credential, str(expected), row.public_key, row.sign_count
            )
        except ceremony.SignCountRegressed:
            reason = "sign_count_regression"
        except ceremony.CeremonyFailed:
            reason = "wrong_assertion"
    if not reason and row is not None:
        # the counter moves only from the value just checked: two answers racing cannot both pass
        moved = await session.execute(
            update(WebAuthnCredential)
            .where(WebAuthnCredential.id == row.id, WebAuthnCredential.sign_count == row.sign_count)
            .values(sign_count=new_count, last_used_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        if getattr(moved, "rowcount", 0) != 1:
            reason = "sign_count_regression"
    if reason:
        limits.failed(address, key, None)
        failures = int(pending.data.get("failures", 0)) + 1
        # the challenge is used up by any answer: a replay of this one finds none
        pending.data = {**pending.data, "failures": failures, "webauthn_challenge": None}
        if failures >= PENDING_ATTEMPTS:
            pending.used_at = utcnow()
        failure(session, account.organization_id, account, "webauthn", reason, address)
        await session.commit()
        raise AuthenticationError("AUT-003", "the authenticator's answer was refused")
    await consume_step(session, body.challenge, ("pending_2fa",))
    limits.succeeded(key, None)
    return await complete(request, response, session, account, [pending.data["first"], "webauthn"], None)


@router.post("/v1/signin/webauthn/authentication:verify", response_model=SignInOut, responses=error_responses(429))
async def authentication_verify(
    request: Request, response: Response, body: AssertionIn, session: SessionDep
) -> dict[str, Any]:
    """Finish the second step with the browser's assertion: a session."""
    return await _assert(request, response, session, body)


# ---------------------------------------------------------------- the caller's authenticators


@router.get("/v1/webauthn_credentials", response_model=Page[AuthenticatorOut])
async def list_authenticators(request: Request, session: SessionDep) -> Page[Any]:
    """The signed-in person's authenticators."""
    current = await current_session(request, session, changes=False)
    return page([_out(r) for r in await people.webauthn_credentials(session, current.account.id)], None)


@router.delete("/v1/webauthn_credentials/{authenticator_id}", status_code=204)
async def delete_authenticator(authenticator_id: str, request: Request, session: SessionDep) -> Response:
    """Remove one of the signed-in person's authenticators (with the cookie, the CSRF token is needed)."""
    current = await current_session(request, session, changes=True)
    row = await session.get(WebAuthnCredential, authenticator_id)
    if row is None or row.account_id != current.account.id:
        raise NotFound("authenticator not found")
    await session.delete(row)
    audit.record_as(
        session,
        current.account.organization_id,
        ("user_account", current.account.id),
        "webauthn_remove",
        "user",
        current.account.id,
        {"authenticator_id": authenticator_id},
    )
    await session.commit()
    return Response(status_code=204)
