"""Sign-in by a link sent by e-mail: the magic link, the password reset, and the invitation to choose a
password; each link single use, its lifetime the policy's, the same answer whether the address is
known or not (api/signin_mail.py sends them after the 202)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from api import signin_mail
from api.deps import SessionDep, StateDep, require
from api.errors import error_responses
from api.people_auth import (
    client_address,
)
from api.routes.accounts import ensure_can_become
from api.rows import account_in_org
from api.schemas.signin import AcceptedOut, AddressIn, InvitationOut, NewPasswordIn, OneTimeTokenIn, SignInOut
from api.signin_flow import after_first, api_state, consume_step, device_key, mail_limit, require_method, step_problem
from api.state import ApiState
from app.domain.iam.principal import Principal
from app.domain.iam.signin_throttle import login_key
from app.errors import InvalidInput, RateLimited
from app.identity import passwords
from app.identity.session_tokens import (
    INVITATION_SECONDS,
    MAGIC_LINK_SECONDS,
)
from app.store import audit, people
from app.store.accounts import utcnow
from app.store.models import Account

router = APIRouter(tags=["sign-in"])


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
    limit = mail_limit(request)
    keys = [("mail", org_id, login_key(email)), ("mail-address", client_address(request))]
    wait = max(limit.wait(k) for k in keys)
    if wait > 0:
        raise RateLimited("too many sign-in e-mails asked for; wait before asking again", retry_after=wait)
    for k in keys:
        limit.failed(k)


async def request_magic_link(request: Request, session: AsyncSession, body: AddressIn) -> dict[str, Any]:
    require_method(await people.policy_of(session, body.organization_id), "magic_link")
    _mail_throttle(request, body.organization_id, str(body.email))
    signin_mail.later(_send_magic_link(api_state(request), body.organization_id, str(body.email)))
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
        raise step_problem(taken.problem)
    account = await session.get(Account, taken.token.account_id)
    if account is None or account.status != "ACTIVE":
        raise step_problem("unknown")
    policy = await people.policy_of(session, account.organization_id)
    require_method(policy, "magic_link")
    await consume_step(session, body.token, ("magic_link",))
    device = await device_key(session, request, body.device_token, account)
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
    signin_mail.later(_send_reset(api_state(request), body.organization_id, str(body.email)))
    return {"status": "accepted"}


@router.post("/v1/signin/password_reset", status_code=202, response_model=AcceptedOut, responses=error_responses(429))
async def signin_password_reset(request: Request, body: AddressIn, session: SessionDep) -> dict[str, Any]:
    """E-mail a password-reset link (valid for the policy's ``password_reset_token_expires_in_seconds``)
    to the user with this address, if there is one (the same answer either way)."""
    return await request_reset(request, session, body)


async def set_password(request: Request, session: AsyncSession, body: NewPasswordIn, kind: str, action: str) -> None:
    if problem := passwords.password_problem(body.new_password):
        raise InvalidInput("password refused", details={"fields": [{"field": "new_password", "message": problem}]})
    taken = await people.take_one_time(session, body.token, (kind,), consume=False)
    if taken.token is None:
        raise step_problem(taken.problem)
    account = await session.get(Account, taken.token.account_id)
    if account is None or account.status != "ACTIVE":
        raise step_problem("unknown")
    if kind == "password_reset":
        require_method(await people.policy_of(session, account.organization_id), "password_reset")
    await consume_step(session, body.token, (kind,))
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
    await api_state(request).config_changed(account.organization_id, "session")


@router.post("/v1/signin/password_reset:confirm", status_code=204)
async def signin_password_reset_confirm(request: Request, body: NewPasswordIn, session: SessionDep) -> Response:
    """Set a new password with a reset link's token (once); every session of the user ends."""
    await set_password(request, session, body, "password_reset", "password_reset")
    return Response(status_code=204)


@router.post("/v1/signin/invitation:accept", status_code=204)
async def signin_invitation_accept(request: Request, body: NewPasswordIn, session: SessionDep) -> Response:
    """Set a password with an invitation's token (once): the bootstrap's or an administrator's link."""
    await set_password(request, session, body, "invitation", "password_set")
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
