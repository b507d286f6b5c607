"""System roles (fixed) and custom roles of an organization."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import Field, field_validator
from sqlalchemy import select

from api.deps import SessionDep, StateDep, authenticate, require
from api.errors import CONFLICT
from api.guard import ensure_holds
from api.models import In, Out, Timestamp
from api.pages import Page, PageDep, cut, id_cursor, page
from api.rows import row_in_org
from app.domain.iam.permissions import is_valid_permission
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import organization_name
from app.domain.iam.roles import SYSTEM_ROLES, Role
from app.domain.shared.ids import new_id
from app.errors import ChangeRefused, Conflict
from app.store import audit
from app.store.accounts import utcnow
from app.store.db import commit_unique
from app.store.models import CustomRole, IncidentMember, RoleBinding

router = APIRouter(tags=["roles"])
PERM = "organization.role"


class Policy(In):
    permission_id: str = Field(max_length=200)
    effect: Literal["allow"]
    description: str = Field(default="", max_length=1000)

    @field_validator("permission_id")
    @classmethod
    def _valid(cls, value: str) -> str:
        if not is_valid_permission(value, allow_wildcard=True):
            raise ValueError(
                "must match service.resource:action (action list|get|update|delete|create|publish|fullaccess or *)"
            )
        return value


class RoleIn(In):
    name: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)
    policies: list[Policy] = Field(min_length=1, max_length=200)


class PolicyOut(Out):
    permission_id: str
    effect: Literal["allow"]
    description: str


class SystemRoleOut(Out):
    id: str
    name: str
    description: str
    system: Literal[True]
    policies: list[PolicyOut]


class CustomRoleOut(Out):
    id: str
    organization_id: str
    name: str
    description: str
    system: Literal[False]
    policies: list[PolicyOut]
    created_at: Timestamp


RoleOut = SystemRoleOut | CustomRoleOut


def system_role_out(role: Role) -> dict[str, Any]:
    return {
        "id": role.id,
        "name": role.name,
        "description": role.description,
        "system": True,
        "policies": [{"permission_id": p, "effect": "allow", "description": ""} for p in role.permissions],
    }


def role_out(row: CustomRole) -> dict[str, Any]:
    return {
        "id": row.id,
        "organization_id": row.organization_id,
        "name": row.name,
        "description": row.description,
        "system": False,
        "policies": row.policies,
        "created_at": row.created_at.isoformat(),
    }


def _role_cursor(cursor: str | None) -> str | None:
    """A role list's cursor: a system role's name or a custom role's id, else 422."""
    return cursor if cursor in SYSTEM_ROLES else id_cursor(cursor)


def _system_roles_after(cursor: str | None) -> list[dict[str, Any]]:
    return [
        system_role_out(r) for r in sorted(SYSTEM_ROLES.values(), key=lambda r: r.id) if not cursor or r.id > cursor
    ]


@router.get("/v1/iam/roles", response_model=Page[SystemRoleOut])
async def list_system_roles(request: Request, state: StateDep, params: PageDep) -> Page[Any]:
    """System roles: predefined, unchangeable. Any authenticated caller may read them."""
    await authenticate(state, request.headers.get("authorization"))
    rows, nxt = cut(_system_roles_after(_role_cursor(params.cursor)), params, lambda r: str(r["id"]))
    return page(rows, nxt)


ORG = "/v1/organizations/{org_id}/iam/roles"


@router.post(
    ORG,
    status_code=201,
    response_model=CustomRoleOut,
    responses=CONFLICT,
)
async def create_role(
    org_id: str,
    body: RoleIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:create"))],
) -> dict[str, Any]:
    ensure_holds(principal, [p.permission_id for p in body.policies], organization_name(org_id), "this role")
    row = CustomRole(
        id=new_id("role"),
        organization_id=org_id,
        name=body.name,
        description=body.description,
        policies=[p.model_dump() for p in body.policies],
        created_at=utcnow(),
    )
    session.add(row)
    audit.record(session, principal, "create", "role", row.id, {"name": body.name, "policies": row.policies})
    await commit_unique(session, "a role with this name already exists")
    await state.config_changed(org_id, "role")
    return role_out(row)


@router.get(ORG, response_model=Page[RoleOut])
async def list_roles(
    org_id: str, session: SessionDep, _p: Annotated[Principal, Depends(require(f"{PERM}:list"))], params: PageDep
) -> Page[Any]:
    """System and custom roles in one list ordered by id (system ids are their names)."""
    query = select(CustomRole).where(CustomRole.organization_id == org_id)
    if _role_cursor(params.cursor):
        query = query.where(CustomRole.id > params.cursor)
    # up to limit + 1 custom roles after the cursor: with the system roles after it, enough to cut the page
    custom = (await session.scalars(query.order_by(CustomRole.id).limit(params.limit + 1))).all()
    merged = sorted(_system_roles_after(params.cursor) + [role_out(r) for r in custom], key=lambda r: str(r["id"]))
    rows, nxt = cut(merged, params, lambda r: str(r["id"]))
    return page(rows, nxt)


async def _custom(session: SessionDep, org_id: str, role_id: str) -> CustomRole:
    if role_id in SYSTEM_ROLES:
        raise ChangeRefused("system roles cannot be changed or deleted")
    return await row_in_org(session, CustomRole, org_id, role_id, "role")


@router.get(ORG + "/{role_id}", response_model=RoleOut)
async def get_role(
    org_id: str,
    role_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require(f"{PERM}:get", "roles/{role_id}"))],
) -> dict[str, Any]:
    if role_id in SYSTEM_ROLES:
        return system_role_out(SYSTEM_ROLES[role_id])
    return role_out(await row_in_org(session, CustomRole, org_id, role_id, "role"))


@router.put(
    ORG + "/{role_id}",
    response_model=CustomRoleOut,
    responses=CONFLICT,
)
async def replace_role(
    org_id: str,
    role_id: str,
    body: RoleIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:update", "roles/{role_id}"))],
) -> dict[str, Any]:
    row = await _custom(session, org_id, role_id)
    ensure_holds(principal, [p.permission_id for p in body.policies], organization_name(org_id), "this role")
    row.name, row.description = body.name, body.description
    row.policies = [p.model_dump() for p in body.policies]
    audit.record(session, principal, "update", "role", row.id, {"name": body.name, "policies": row.policies})
    await commit_unique(session, "a role with this name already exists")
    await state.config_changed(org_id, "role")
    return role_out(row)


@router.delete(ORG + "/{role_id}", status_code=204, responses=CONFLICT)
async def delete_role(
    org_id: str,
    role_id: str,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:delete", "roles/{role_id}"))],
) -> None:
    row = await _custom(session, org_id, role_id)
    bound = (await session.scalars(select(RoleBinding.id).where(RoleBinding.role_id == row.id).limit(1))).first()
    bound = (
        bound
        or (await session.scalars(select(IncidentMember.id).where(IncidentMember.role_id == row.id).limit(1))).first()
    )
    if bound is not None:
        raise Conflict("the role is still bound; remove its bindings first")
    await session.delete(row)
    audit.record(session, principal, "delete", "role", row.id, {"name": row.name})
    await session.commit()
    await state.config_changed(org_id, "role")
