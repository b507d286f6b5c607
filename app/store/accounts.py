"""Organizations, accounts, access tokens and bindings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain import iam
from app.domain.ids import new_id
from app.domain.tokens import generate_token, token_hash
from app.store.models import AccessToken, Account, Organization, RoleBinding


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller, with everything the IAM decision needs."""

    account_id: str
    organization_id: str
    kind: str
    platform_owner: bool
    token_id: str
    bindings: tuple[iam.Binding, ...]


@dataclass(frozen=True, slots=True)
class TokenLookup:
    """What the store knows about a presented token (the API decides the error code)."""

    principal: Principal | None
    expired: bool


async def create_organization(session: AsyncSession, name: str) -> Organization:
    org = Organization(id=new_id("org"), name=name, created_at=utcnow())
    session.add(org)
    await session.flush()
    return org


async def create_account(
    session: AsyncSession, org_id: str, *, kind: str, name: str, platform_owner: bool = False
) -> Account:
    account = Account(
        id=new_id("sa" if kind == "service_account" else "usr"),
        organization_id=org_id,
        kind=kind,
        name=name,
        description="",
        status="ACTIVE",
        platform_owner=platform_owner,
        created_at=utcnow(),
    )
    session.add(account)
    await session.flush()
    return account


async def issue_token(
    session: AsyncSession, account: Account, *, name: str = "", expires_at: datetime | None = None
) -> tuple[AccessToken, str]:
    """Create a static token; the plain value is returned here and never again."""
    plain = generate_token()
    row = AccessToken(
        id=new_id("tok"),
        account_id=account.id,
        organization_id=account.organization_id,
        name=name,
        token_hash=token_hash(plain),
        created_at=utcnow(),
        expires_at=expires_at,
    )
    session.add(row)
    await session.flush()
    return row, plain


async def bind(
    session: AsyncSession, org_id: str, subject_kind: str, subject_id: str, resource: str, role_id: str
) -> None:
    session.add(
        RoleBinding(
            id=new_id("bnd"),
            organization_id=org_id,
            subject_kind=subject_kind,
            subject_id=subject_id,
            resource=resource,
            role_id=role_id,
        )
    )
    await session.flush()


async def count_organizations(session: AsyncSession) -> int:
    return len((await session.scalars(select(Organization.id).limit(1))).all())


async def bootstrap(session: AsyncSession, org_name: str) -> dict[str, str]:
    """An organization with an owner service account (also the platform owner) and its token."""
    org = await create_organization(session, org_name)
    account = await create_account(session, org.id, kind="service_account", name="bootstrap-owner", platform_owner=True)
    await bind(session, org.id, "service_account", account.id, iam.organization_name(org.id), "owner")
    _row, plain = await issue_token(session, account, name="bootstrap")
    return {"organization_id": org.id, "service_account_id": account.id, "access_token": plain}


async def lookup_token(session: AsyncSession, hashed: str, now: datetime) -> TokenLookup:
    row = (
        await session.execute(
            select(AccessToken, Account)
            .join(Account, Account.id == AccessToken.account_id)
            .where(AccessToken.token_hash == hashed)
        )
    ).first()
    if row is None:
        return TokenLookup(principal=None, expired=False)
    token, account = row
    if token.revoked_at is not None or account.status != "ACTIVE":
        return TokenLookup(principal=None, expired=False)
    if token.expires_at is not None and _aware(token.expires_at) <= now:
        return TokenLookup(principal=None, expired=True)
    bindings = (
        await session.scalars(
            select(RoleBinding).where(RoleBinding.subject_kind == account.kind, RoleBinding.subject_id == account.id)
        )
    ).all()
    principal = Principal(
        account_id=account.id,
        organization_id=account.organization_id,
        kind=account.kind,
        platform_owner=account.platform_owner,
        token_id=token.id,
        bindings=tuple(iam.Binding(resource=b.resource, role_id=b.role_id) for b in bindings),
    )
    return TokenLookup(principal=principal, expired=False)


def _aware(value: datetime) -> datetime:
    # SQLite returns naive datetimes even for timezone-aware columns.
    return value if value.tzinfo else value.replace(tzinfo=UTC)
