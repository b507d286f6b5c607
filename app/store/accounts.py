"""Organizations, accounts, access tokens and bindings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.evaluation import Binding
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import organization_name, resource_name
from app.domain.iam.roles import SYSTEM_ROLES, Role
from app.domain.iam.tokens import generate_token, token_hash
from app.domain.shared.ids import new_id
from app.store.models import (
    AccessToken,
    Account,
    CustomRole,
    Group,
    GroupMember,
    IncidentMember,
    Organization,
    RoleBinding,
)


def utcnow() -> datetime:
    return datetime.now(UTC)


async def count_bindings(session: AsyncSession, org_id: str, *, excluding_subject: tuple[str, str]) -> int:
    """The organization's resource bindings, but those of one ``(subject_kind, subject_id)``."""
    kind, subject_id = excluding_subject
    query = (
        select(func.count())
        .select_from(RoleBinding)
        .where(RoleBinding.organization_id == org_id)
        .where((RoleBinding.subject_kind != kind) | (RoleBinding.subject_id != subject_id))
    )
    return int(await session.scalar(query) or 0)


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
    """An organization with an owner service account and its token.

    The first organization's owner is also the platform owner (it may create organizations).
    """
    first = await count_organizations(session) == 0
    org = await create_organization(session, org_name)
    account = await create_account(
        session, org.id, kind="service_account", name="bootstrap-owner", platform_owner=first
    )
    await bind(session, org.id, "service_account", account.id, organization_name(org.id), "owner")
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
    if token.expires_at is not None and token.expires_at <= now:
        return TokenLookup(principal=None, expired=True)
    principal = await load_principal(session, account, token.id)
    return TokenLookup(principal=principal, expired=False)


def custom_role(row: CustomRole) -> Role:
    return Role(
        id=row.id,
        name=row.name,
        description=row.description,
        permissions=tuple(str(p["permission_id"]) for p in row.policies),
    )


async def org_roles(session: AsyncSession, org_id: str) -> dict[str, Role]:
    """System roles and the organization's custom roles, by id."""
    roles = dict(SYSTEM_ROLES)
    for row in (await session.scalars(select(CustomRole).where(CustomRole.organization_id == org_id))).all():
        roles[row.id] = custom_role(row)
    return roles


async def load_principal(session: AsyncSession, account: Account, token_id: str) -> Principal:
    """Everything that grants the account something: its bindings, its groups' bindings,
    and its incident memberships (as bindings on that incident and its sub-resources)."""
    group_ids: frozenset[str] = frozenset()
    subjects = [(account.kind, account.id)]
    if account.kind == "user_account":
        group_ids = frozenset(
            (await session.scalars(select(GroupMember.group_id).where(GroupMember.user_id == account.id))).all()
        )
        subjects += [("group", g) for g in group_ids]
    bindings: list[Binding] = []
    incident_ids: set[str] = set()
    for kind, subject_id in subjects:
        rows = await session.scalars(
            select(RoleBinding).where(RoleBinding.subject_kind == kind, RoleBinding.subject_id == subject_id)
        )
        bindings += [Binding(resource=b.resource, role_id=b.role_id) for b in rows.all()]
    if account.kind == "user_account":
        members = await session.scalars(
            select(IncidentMember).where(
                ((IncidentMember.member_kind == "user") & (IncidentMember.member_id == account.id))
                | ((IncidentMember.member_kind == "group") & IncidentMember.member_id.in_(group_ids or {""}))
            )
        )
        for m in members.all():
            incident_ids.add(m.incident_id)
            resource = resource_name(m.organization_id, "incidents", m.incident_id) + "<(/.*)?$>"
            bindings.append(Binding(resource=resource, role_id=m.role_id))
    return Principal(
        account_id=account.id,
        organization_id=account.organization_id,
        kind=account.kind,
        platform_owner=account.platform_owner,
        token_id=token_id,
        bindings=tuple(bindings),
        roles=await org_roles(session, account.organization_id),
        group_ids=group_ids,
        incident_ids=frozenset(incident_ids),
    )


async def unknown_members(
    session: AsyncSession, org_id: str, user_ids: Iterable[str], group_ids: Iterable[str]
) -> tuple[list[str], list[str]]:
    """The ids among ``user_ids`` / ``group_ids`` that are not users / groups of ``org_id``: ids
    that do not exist and ids of another organization alike (the answer does not tell them apart)."""
    users, groups = set(user_ids), set(group_ids)
    found_users: set[str] = set()
    found_groups: set[str] = set()
    if users:
        found_users = set(
            (
                await session.scalars(
                    select(Account.id).where(
                        Account.id.in_(users), Account.organization_id == org_id, Account.kind == "user_account"
                    )
                )
            ).all()
        )
    if groups:
        found_groups = set(
            (await session.scalars(select(Group.id).where(Group.id.in_(groups), Group.organization_id == org_id))).all()
        )
    return sorted(users - found_users), sorted(groups - found_groups)
