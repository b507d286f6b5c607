"""Service accounts and users (accounts of kind ``service_account`` / ``user_account``)
and their static access tokens. Both kinds share one implementation.

No ``from __future__ import annotations`` here: the route factory annotates request bodies
with per-kind model classes held in local variables, which FastAPI can only resolve when
annotations are evaluated at definition time.
"""

from datetime import timedelta
from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter, Body, Depends, Request
from pydantic import BaseModel, EmailStr, Field
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from api.deps import SessionDep, StateDep, authenticate, authorize, permission_extra, require
from api.guard import ensure_can_act_as
from api.incident_guard import ensure_sees_incidents_of
from api.models import In, Out, Timestamp, omittable
from api.pages import Page, PageDep, page, page_in_org, paginate
from api.rows import account_in_org
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import resource_name
from app.errors import NotFound
from app.store import audit
from app.store.accounts import create_account, issue_token, load_principal, utcnow
from app.store.models import AccessToken, Account, RoleBinding


class ServiceAccountIn(In):
    name: str = Field(min_length=1, max_length=200)
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"
    description: str = Field(default="", max_length=2000)


class ServiceAccountPatch(In):
    name: str = omittable(min_length=1, max_length=200)
    status: Literal["ACTIVE", "INACTIVE"] = omittable()
    description: str = omittable(max_length=2000)


class UserIn(In):
    email: EmailStr
    display_name: str = Field(min_length=1, max_length=200)
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"


class UserPatch(In):
    display_name: str = omittable(min_length=1, max_length=200)
    status: Literal["ACTIVE", "INACTIVE"] = omittable()


class TokenIn(In):
    name: str = Field(default="", max_length=200)
    expires_in: int | None = Field(default=None, ge=60, le=366 * 24 * 3600)


class ServiceAccountOut(Out):
    id: str
    kind: Literal["service_account"]
    name: str
    status: Literal["ACTIVE", "INACTIVE"]
    organization_id: str
    created_at: Timestamp
    description: str


class UserOut(Out):
    id: str
    kind: Literal["user_account"]
    name: str
    display_name: str
    email: str | None
    status: Literal["ACTIVE", "INACTIVE"]
    organization_id: str
    created_at: Timestamp


class TokenOut(Out):
    id: str
    name: str
    account_id: str
    created_at: Timestamp
    expires_at: Timestamp | None
    last_used_at: Timestamp | None


class TokenCreatedOut(TokenOut):
    access_token: str = Field(description="the secret; returned only here")


def account_out(account: Account) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": account.id,
        "kind": account.kind,
        "name": account.name,
        "status": account.status,
        "organization_id": account.organization_id,
        "created_at": account.created_at.isoformat(),
    }
    if account.kind == "user_account":
        out.update(email=account.email, display_name=account.name)
    else:
        out["description"] = account.description
    return out


def token_out(token: AccessToken) -> dict[str, Any]:
    return {
        "id": token.id,
        "name": token.name,
        "account_id": token.account_id,
        "created_at": token.created_at.isoformat(),
        "expires_at": token.expires_at.isoformat() if token.expires_at else None,
        "last_used_at": token.last_used_at.isoformat() if token.last_used_at else None,
    }


async def get_account(session: SessionDep, org_id: str, account_id: str, kind: str) -> Account:
    return await account_in_org(session, org_id, account_id, kind)


async def revoke_token(
    session: SessionDep, state: StateDep, principal: Principal, account: Account, token_id: str
) -> None:
    token = await session.get(AccessToken, token_id)
    if token is None or token.account_id != account.id or token.revoked_at is not None:
        raise NotFound("access token not found")
    token.revoked_at = utcnow()
    audit.record(session, principal, "revoke", "access_token", token.id, {"account_id": account.id})
    await session.commit()
    await state.config_changed(account.organization_id, "access_token")


async def ensure_can_become(session: AsyncSession, principal: Principal, account: Account, what: str) -> None:
    """The act-as guard (api/guard.py) and, for a user, the sight of its incidents (api/incident_guard.py)."""
    target = await load_principal(session, account, token_id="")
    ensure_can_act_as(principal, target)
    if account.kind == "user_account":
        await ensure_sees_incidents_of(
            session,
            principal,
            account.organization_id,
            user_ids=(account.id,),
            group_ids=target.group_ids,
            incident_ids=target.incident_ids,
            what=what,
        )


def account_router(kind: str, collection: str, perm: str) -> APIRouter:
    """Routes for one kind of account: CRUD and access tokens."""
    router = APIRouter(prefix=f"/v1/organizations/{{org_id}}/{collection}", tags=[collection.replace("_", " ")])
    one = f"{collection}/{{account_id}}"
    tokens = f"{one}/access_tokens"
    body_in = ServiceAccountIn if kind == "service_account" else UserIn
    body_patch = ServiceAccountPatch if kind == "service_account" else UserPatch
    body_out: type[Out] = ServiceAccountOut if kind == "service_account" else UserOut

    @router.post(
        "",
        status_code=201,
        response_model=body_out,
        name=f"create_{kind}",
    )
    async def create(
        org_id: str,
        body: body_in,  # type: ignore[valid-type]  # chosen per kind above
        session: SessionDep,
        principal: Annotated[Principal, Depends(require(f"{perm}:create"))],
    ) -> dict[str, Any]:
        data = cast(BaseModel, body).model_dump()
        name = str(data.get("name") or data.get("display_name"))
        account = await create_account(session, org_id, kind=kind, name=name)
        account.status = data["status"]
        account.description = data.get("description", "")
        account.email = data.get("email")
        audit.record(session, principal, "create", kind, account.id, {"name": name})
        await session.commit()
        return account_out(account)

    @router.get("", response_model=Page[body_out], name=f"list_{kind}s")  # type: ignore[valid-type]
    async def list_accounts(
        org_id: str,
        session: SessionDep,
        _p: Annotated[Principal, Depends(require(f"{perm}:list"))],
        params: PageDep,
    ) -> Page[Any]:
        rows, nxt = await page_in_org(session, Account, org_id, params, Account.kind == kind)
        return page([account_out(a) for a in rows], nxt)

    @router.get("/{account_id}", response_model=body_out, name=f"get_{kind}")
    async def get_one(
        org_id: str,
        account_id: str,
        session: SessionDep,
        _p: Annotated[Principal, Depends(require(f"{perm}:get", one))],
    ) -> dict[str, Any]:
        return account_out(await get_account(session, org_id, account_id, kind))

    @router.patch(
        "/{account_id}",
        response_model=body_out,
        name=f"update_{kind}",
    )
    async def update(
        org_id: str,
        account_id: str,
        body: body_patch,  # type: ignore[valid-type]  # chosen per kind above
        session: SessionDep,
        state: StateDep,
        principal: Annotated[Principal, Depends(require(f"{perm}:update", one))],
    ) -> dict[str, Any]:
        account = await get_account(session, org_id, account_id, kind)
        changes = cast(BaseModel, body).model_dump(exclude_unset=True)
        if changes.get("status") == "ACTIVE" and account.status != "ACTIVE":
            # reactivating brings every token and credential of the account back: act-as guard
            await ensure_can_become(session, principal, account, "reactivating this account")
        for field, value in changes.items():
            setattr(account, "name" if field == "display_name" else field, value)
        audit.record(session, principal, "update", kind, account.id, changes)
        await session.commit()
        await state.config_changed(org_id, kind)
        return account_out(account)

    @router.delete("/{account_id}", status_code=204, name=f"delete_{kind}")
    async def remove(
        org_id: str,
        account_id: str,
        session: SessionDep,
        state: StateDep,
        principal: Annotated[Principal, Depends(require(f"{perm}:delete", one))],
    ) -> None:
        account = await get_account(session, org_id, account_id, kind)
        await session.execute(delete(AccessToken).where(AccessToken.account_id == account.id))
        await session.execute(
            delete(RoleBinding).where(RoleBinding.subject_kind == kind, RoleBinding.subject_id == account.id)
        )
        await session.delete(account)
        audit.record(session, principal, "delete", kind, account.id, {"name": account.name})
        await session.commit()
        await state.config_changed(org_id, kind)

    @router.post(
        "/{account_id}/access_tokens",
        status_code=201,
        response_model=TokenCreatedOut,
        name=f"create_{kind}_token",
    )
    async def create_token(
        org_id: str,
        account_id: str,
        session: SessionDep,
        principal: Annotated[Principal, Depends(require(f"{perm}.access_token:create", tokens))],
        body: Annotated[TokenIn | None, Body()] = None,
    ) -> dict[str, Any]:
        """Every field is optional (``{name?, expires_in?}``): no body at all is ``{}``."""
        body = body or TokenIn()
        account = await get_account(session, org_id, account_id, kind)
        await ensure_can_become(session, principal, account, "a token for this account")
        expires = utcnow() + timedelta(seconds=body.expires_in) if body.expires_in else None
        token, plain = await issue_token(session, account, name=body.name, expires_at=expires)
        audit.record(session, principal, "create", "access_token", token.id, {"account_id": account.id})
        await session.commit()
        return {**token_out(token), "access_token": plain}

    @router.get(
        "/{account_id}/access_tokens",
        response_model=Page[TokenOut],
        name=f"list_{kind}_tokens",
    )
    async def list_tokens(
        org_id: str,
        account_id: str,
        session: SessionDep,
        _p: Annotated[Principal, Depends(require(f"{perm}.access_token:list", tokens))],
        params: PageDep,
    ) -> Page[Any]:
        account = await get_account(session, org_id, account_id, kind)
        query = select(AccessToken).where(AccessToken.account_id == account.id, AccessToken.revoked_at.is_(None))
        rows, nxt = await paginate(session, query, params, AccessToken.id)
        return page([token_out(t) for t in rows], nxt)

    @router.delete(
        "/{account_id}/access_tokens/{token_id}",
        status_code=204,
        name=f"revoke_{kind}_token",
    )
    async def delete_token(
        org_id: str,
        account_id: str,
        token_id: str,
        session: SessionDep,
        state: StateDep,
        principal: Annotated[Principal, Depends(require(f"{perm}.access_token:delete", f"{tokens}/{{token_id}}"))],
    ) -> None:
        await revoke_token(session, state, principal, await get_account(session, org_id, account_id, kind), token_id)

    return router


service_accounts = account_router("service_account", "service_accounts", "organization.service_account")
users = account_router("user_account", "users", "organization.user")

short = APIRouter(tags=["service accounts"])


@short.delete(
    "/v1/service_accounts/{account_id}/access_tokens/{token_id}",
    status_code=204,
    openapi_extra=permission_extra("organization.service_account.access_token:delete"),
)
async def delete_token_short_path(
    account_id: str, token_id: str, request: Request, session: SessionDep, state: StateDep
) -> None:
    """The short path of the token's delete: the organization is the account's own."""
    principal = await authenticate(state, request.headers.get("authorization"))
    account = await session.get(Account, account_id)
    if account is None or account.kind != "service_account":
        raise NotFound("not found")  # the same answer another organization's token gets
    org_id = account.organization_id
    authorize(
        principal,
        org_id,
        "organization.service_account.access_token:delete",
        resource_name(org_id, "service_accounts", f"{account_id}/access_tokens/{token_id}"),
    )
    await revoke_token(session, state, principal, account, token_id)
