"""The signed-in person's sessions: who they are (``/v1/me``), their sessions listed and revoked, sign-out,
and the refresh of the current session's access token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from api.deps import SessionDep
from api.pages import Page, page
from api.people_auth import (
    COOKIE,
    Current,
    current_session,
)
from api.schemas.signin import MeOut, RefreshedOut, SessionOut
from api.signin_flow import api_state
from app.domain.iam.signin_policy import session_satisfies
from app.errors import NotFound
from app.identity.session_tokens import (
    ACCESS_TOKEN_SECONDS,
)
from app.store import audit, people
from app.store.accounts import utcnow
from app.store.models import UserSession

router = APIRouter(tags=["sign-in"])


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
    await api_state(request).config_changed(row.organization_id, "session")


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
    await api_state(request).config_changed(current.account.organization_id, "session")
    return {"access_token": access, "token_type": "Bearer", "expires_in": ACCESS_TOKEN_SECONDS}
