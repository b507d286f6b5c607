"""People's sign-in in the store (issue 34): credentials, one-time tokens, sessions, authenticators.

Decisions (which step comes next, what the policy allows) are app/domain/iam/signin_policy.py's; this
module reads and writes rows only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.auth_policy import AuthenticationPolicy
from app.domain.iam.resource_names import organization_name
from app.domain.iam.signin_throttle import login_key
from app.domain.shared.ids import new_id
from app.identity.session_tokens import (
    ACCESS_TOKEN_SECONDS,
    DEVICE_PREFIX,
    INVITATION_SECONDS,
    ONE_TIME_PREFIX,
    SESSION_PREFIX,
    SESSION_SECONDS,
    new_csrf_token,
    new_secret,
    secret_hash,
)
from app.store.accounts import bind, create_account, utcnow
from app.store.models import Account, SignInToken, UserCredential, UserSession, WebAuthnCredential
from app.store.models import AuthenticationPolicy as PolicyRow


async def policy_of(session: AsyncSession, org_id: str) -> AuthenticationPolicy:
    row = await session.get(PolicyRow, org_id)
    return AuthenticationPolicy.model_validate(row.policy if row else {})


async def find_user(session: AsyncSession, org_id: str, email: str) -> Account | None:
    """The organization's active user with this e-mail (case-insensitive), the oldest if several."""
    return (
        await session.scalars(
            select(Account)
            .where(
                Account.organization_id == org_id,
                Account.kind == "user_account",
                Account.status == "ACTIVE",
                func.lower(Account.email) == login_key(email),
            )
            .order_by(Account.created_at, Account.id)
            .limit(1)
        )
    ).first()


async def credentials(session: AsyncSession, account_id: str, *, create: bool = False) -> UserCredential | None:
    row = await session.get(UserCredential, account_id)
    if row is None and create:
        row = UserCredential(account_id=account_id, totp_last_step=0, recovery_code_hashes=[])
        session.add(row)
        await session.flush()
    return row


async def webauthn_credentials(session: AsyncSession, account_id: str) -> list[WebAuthnCredential]:
    rows = await session.scalars(
        select(WebAuthnCredential).where(WebAuthnCredential.account_id == account_id).order_by(WebAuthnCredential.id)
    )
    return list(rows.all())


async def enrolled_factors(session: AsyncSession, account_id: str) -> tuple[set[str], int]:
    """The second factors the user enrolled, and how many recovery codes are left."""
    cred = await credentials(session, account_id)
    found: set[str] = set()
    codes = 0
    if cred is not None and cred.totp_secret:
        found.add("totp")
        codes = len(cred.recovery_code_hashes)
    if await webauthn_credentials(session, account_id):
        found.add("webauthn")
    return found, codes


async def new_one_time(
    session: AsyncSession, kind: str, account: Account, seconds: int, data: dict[str, Any] | None = None
) -> tuple[SignInToken, str]:
    plain = new_secret(DEVICE_PREFIX if kind == "device" else ONE_TIME_PREFIX)
    now = utcnow()
    row = SignInToken(
        id=new_id("sit"),
        token_hash=secret_hash(plain),
        kind=kind,
        account_id=account.id,
        organization_id=account.organization_id,
        data=data or {},
        created_at=now,
        expires_at=now + timedelta(seconds=seconds),
    )
    session.add(row)
    await session.flush()
    return row, plain


@dataclass(frozen=True, slots=True)
class Taken:
    token: SignInToken | None
    problem: str | None  # "unknown", "used", "expired"


async def take_one_time(session: AsyncSession, plain: str, kinds: tuple[str, ...], *, consume: bool = True) -> Taken:
    """The token of one of ``kinds``, marked used (exactly once, even under concurrent requests)."""
    row = (
        await session.scalars(
            select(SignInToken).where(SignInToken.token_hash == secret_hash(plain), SignInToken.kind.in_(kinds))
        )
    ).first()
    if row is None:
        return Taken(None, "unknown")
    now = utcnow()
    if row.used_at is not None:
        return Taken(None, "used")
    if row.expires_at <= now:
        return Taken(None, "expired")
    if consume:
        done = await session.execute(
            update(SignInToken)
            .where(SignInToken.id == row.id, SignInToken.used_at.is_(None))
            .values(used_at=now)
            .execution_options(synchronize_session=False)
        )
        if getattr(done, "rowcount", 0) != 1:
            return Taken(None, "used")
        row.used_at = now
    return Taken(row, None)


async def retire_one_time(session: AsyncSession, account_id: str, kind: str) -> None:
    """Every unused token of ``kind`` of the account is used up (a new reset link voids the old)."""
    await session.execute(
        update(SignInToken)
        .where(SignInToken.account_id == account_id, SignInToken.kind == kind, SignInToken.used_at.is_(None))
        .values(used_at=utcnow())
        .execution_options(synchronize_session=False)
    )


@dataclass(frozen=True, slots=True)
class NewSession:
    row: UserSession
    access_token: str
    cookie: str


async def create_session(
    session: AsyncSession, account: Account, methods: list[str], address: str, user_agent: str
) -> NewSession:
    access, cookie = new_secret(SESSION_PREFIX), new_secret(SESSION_PREFIX)
    now = utcnow()
    row = UserSession(
        id=new_id("ses"),
        account_id=account.id,
        organization_id=account.organization_id,
        methods=methods,
        access_token_hash=secret_hash(access),
        cookie_hash=secret_hash(cookie),
        csrf_token=new_csrf_token(),
        address=address[:64],
        user_agent=user_agent[:200],
        created_at=now,
        access_expires_at=now + timedelta(seconds=ACCESS_TOKEN_SECONDS),
        expires_at=now + timedelta(seconds=SESSION_SECONDS),
    )
    session.add(row)
    await session.flush()
    return NewSession(row, access, cookie)


async def renew_access_token(session: AsyncSession, row: UserSession) -> str:
    """A new access token for the session (the old one stops working), never past the session's end."""
    access = new_secret(SESSION_PREFIX)
    row.access_token_hash = secret_hash(access)
    row.access_expires_at = min(row.expires_at, utcnow() + timedelta(seconds=ACCESS_TOKEN_SECONDS))
    await session.flush()
    return access


async def session_by(session: AsyncSession, *, access_token: str = "", cookie: str = "") -> UserSession | None:
    column = UserSession.access_token_hash if access_token else UserSession.cookie_hash
    return (await session.scalars(select(UserSession).where(column == secret_hash(access_token or cookie)))).first()


def session_live(row: UserSession, now: datetime) -> bool:
    return row.ended_at is None and row.expires_at > now


async def live_sessions(session: AsyncSession, account_id: str) -> list[UserSession]:
    now = utcnow()
    rows = await session.scalars(
        select(UserSession)
        .where(UserSession.account_id == account_id, UserSession.ended_at.is_(None), UserSession.expires_at > now)
        .order_by(UserSession.created_at.desc(), UserSession.id)
    )
    return list(rows.all())


async def end_sessions(session: AsyncSession, account_id: str, reason: str) -> list[str]:
    """End every live session of the account; their ids."""
    rows = await live_sessions(session, account_id)
    now = utcnow()
    for row in rows:
        row.ended_at, row.end_reason = now, reason
    await session.flush()
    return [r.id for r in rows]


OWNER_EMAIL = "owner@localhost"


async def create_owner_user(session: AsyncSession, org_id: str, email: str) -> tuple[Account, SignInToken, str]:
    """The bootstrap's person: a user with the owner role and a one-time link to choose a password."""
    account = await create_account(session, org_id, kind="user_account", name="Owner")
    account.email = email
    await bind(session, org_id, "user_account", account.id, organization_name(org_id), "owner")
    row, token = await new_one_time(session, "invitation", account, INVITATION_SECONDS)
    return account, row, token
