"""Groups of users."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import Field
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from api.deps import SessionDep, StateDep, require
from api.errors import CONFLICT
from api.guard import ensure_can_grant
from api.incident_guard import ensure_sees_incidents_of
from api.models import In, Out, Timestamp, omittable
from api.pages import Page, PageDep, page, page_in_org
from api.rows import row_in_org
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import resource_name
from app.domain.shared.ids import new_id
from app.errors import Conflict, InvalidInput
from app.store import audit
from app.store.accounts import org_roles, utcnow
from app.store.db import commit_unique
from app.store.models import Account, Group, GroupMember, IncidentMember, RoleBinding

router = APIRouter(prefix="/v1/organizations/{org_id}/groups", tags=["groups"])
PERM = "organization.group"


class GroupIn(In):
    name: str = Field(min_length=1, max_length=200)
    member_user_ids: list[str] = Field(default_factory=list, max_length=10000)


class GroupPatch(In):
    name: str = omittable(min_length=1, max_length=200)
    member_user_ids: list[str] = omittable(max_length=10000)


class GroupOut(Out):
    id: str
    organization_id: str
    name: str
    member_user_ids: list[str]
    created_at: Timestamp


async def _members(session: SessionDep, group_id: str) -> list[str]:
    rows = await session.scalars(select(GroupMember.user_id).where(GroupMember.group_id == group_id))
    return sorted(rows.all())


async def _set_members(session: SessionDep, org_id: str, group_id: str, user_ids: list[str]) -> None:
    wanted = set(user_ids)
    if wanted:
        found = set(
            (
                await session.scalars(
                    select(Account.id).where(
                        Account.id.in_(wanted), Account.organization_id == org_id, Account.kind == "user_account"
                    )
                )
            ).all()
        )
        if missing := sorted(wanted - found):
            raise InvalidInput(
                "unknown users", details={"fields": [{"field": "member_user_ids", "message": f"unknown: {missing}"}]}
            )
    await session.execute(delete(GroupMember).where(GroupMember.group_id == group_id))
    session.add_all(GroupMember(group_id=group_id, user_id=u) for u in sorted(wanted))


async def ensure_can_join(session: SessionDep, principal: Principal, org_id: str, group_id: str) -> None:
    """Adding a member hands it every role bound to the group and the group's incident memberships:
    the caller must hold them all and see those incidents (api/incident_guard.py)."""
    roles = await org_roles(session, org_id)
    bound = await session.scalars(
        select(RoleBinding).where(RoleBinding.subject_kind == "group", RoleBinding.subject_id == group_id)
    )
    for binding in bound.all():
        ensure_can_grant(principal, roles, binding.role_id, binding.resource)
    memberships = await session.scalars(
        select(IncidentMember).where(IncidentMember.member_kind == "group", IncidentMember.member_id == group_id)
    )
    for member in memberships.all():
        resource = resource_name(org_id, "incidents", member.incident_id) + "<(/.*)?$>"
        ensure_can_grant(principal, roles, member.role_id, resource)
    await ensure_sees_incidents_of(
        session, principal, org_id, group_ids=(group_id,), what="adding members to this group"
    )


async def group_out(session: SessionDep, group: Group) -> dict[str, Any]:
    return {
        "id": group.id,
        "organization_id": group.organization_id,
        "name": group.name,
        "member_user_ids": await _members(session, group.id),
        "created_at": group.created_at.isoformat(),
    }


async def _get(session: SessionDep, org_id: str, group_id: str) -> Group:
    return await row_in_org(session, Group, org_id, group_id, "group")


DUPLICATE_NAME = "a group with this name already exists"


async def _commit(session: SessionDep) -> None:
    await commit_unique(session, DUPLICATE_NAME)


async def _flush(session: SessionDep) -> None:
    """Write the changes so far; a name another group has is a 409 here already (before the members)."""
    try:
        await session.flush()
    except IntegrityError as exc:
        await session.rollback()
        raise Conflict(DUPLICATE_NAME) from exc


@router.post("", status_code=201, response_model=GroupOut, responses=CONFLICT)
async def create_group(
    org_id: str,
    body: GroupIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:create"))],
) -> dict[str, Any]:
    group = Group(id=new_id("grp"), organization_id=org_id, name=body.name, created_at=utcnow())
    session.add(group)
    await _flush(session)
    await _set_members(session, org_id, group.id, body.member_user_ids)
    audit.record(session, principal, "create", "group", group.id, {"name": body.name})
    await _commit(session)
    await state.config_changed(org_id, "group")
    return await group_out(session, group)


@router.get("", response_model=Page[GroupOut])
async def list_groups(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require(f"{PERM}:list"))],
    params: PageDep,
) -> Page[Any]:
    rows, nxt = await page_in_org(session, Group, org_id, params)
    return page([await group_out(session, g) for g in rows], nxt)


@router.get("/{group_id}", response_model=GroupOut)
async def get_group(
    org_id: str,
    group_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require(f"{PERM}:get", "groups/{group_id}"))],
) -> dict[str, Any]:
    return await group_out(session, await _get(session, org_id, group_id))


@router.patch("/{group_id}", response_model=GroupOut, responses=CONFLICT)
async def update_group(
    org_id: str,
    group_id: str,
    body: GroupPatch,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:update", "groups/{group_id}"))],
) -> dict[str, Any]:
    group = await _get(session, org_id, group_id)
    if body.name is not None:
        group.name = body.name
        await _flush(session)
    if body.member_user_ids is not None:
        if set(body.member_user_ids) - set(await _members(session, group.id)):
            await ensure_can_join(session, principal, org_id, group.id)
        await _set_members(session, org_id, group.id, body.member_user_ids)
    audit.record(session, principal, "update", "group", group.id, body.model_dump(exclude_unset=True))
    await _commit(session)
    await state.config_changed(org_id, "group")
    return await group_out(session, group)


@router.delete("/{group_id}", status_code=204)
async def delete_group(
    org_id: str,
    group_id: str,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:delete", "groups/{group_id}"))],
) -> None:
    group = await _get(session, org_id, group_id)
    await session.execute(
        delete(RoleBinding).where(RoleBinding.subject_kind == "group", RoleBinding.subject_id == group.id)
    )
    await session.delete(group)
    audit.record(session, principal, "delete", "group", group.id, {"name": group.name})
    await session.commit()
    await state.config_changed(org_id, "group")
