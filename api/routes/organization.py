"""Organizations (created by the platform owner), the authentication policy and the audit log."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field
from sqlalchemy import select

from api.deps import SessionDep, StateDep, authenticate, permission_extra, require
from api.models import In, Out, Timestamp, omittable
from api.pages import Page, PageDep, page, paginate
from app.domain.iam.auth_policy import AuthenticationPolicy
from app.domain.iam.principal import Principal
from app.errors import InvalidInput, NotFound, PermissionDenied
from app.store import audit
from app.store.accounts import create_organization
from app.store.models import AuditEntry, Organization
from app.store.models import AuthenticationPolicy as PolicyRow

router = APIRouter(prefix="/v1/organizations", tags=["organizations"])


class OrganizationIn(In):
    name: str = Field(min_length=1, max_length=200)
    parent_organization_id: str | None = None
    partner_organization_ids: list[str] = Field(default_factory=list, max_length=1000)
    license_subscriber_organization_ids: list[str] = Field(default_factory=list, max_length=1000)


class OrganizationPatch(In):
    parent_organization_id: str | None = None
    partner_organization_ids: list[str] = omittable(max_length=1000)
    license_subscriber_organization_ids: list[str] = omittable(max_length=1000)


class OrganizationOut(Out):
    id: str
    name: str
    parent_organization_id: str | None
    partner_organization_ids: list[str]
    license_subscriber_organization_ids: list[str]
    created_at: Timestamp


class ActorOut(Out):
    kind: str
    id: str


class TargetOut(Out):
    type: str
    id: str


class AuditEntryOut(Out):
    id: str
    at: Timestamp
    actor: ActorOut
    action: str
    target: TargetOut
    detail: dict[str, Any]


def org_out(org: Organization) -> dict[str, Any]:
    return {
        "id": org.id,
        "name": org.name,
        "parent_organization_id": org.parent_organization_id,
        "partner_organization_ids": org.partner_organization_ids,
        "license_subscriber_organization_ids": org.license_subscriber_organization_ids,
        "created_at": org.created_at.isoformat(),
    }


async def _check_relations(session: SessionDep, ids: list[str]) -> None:
    ids = [i for i in ids if i]
    if ids:
        found = set((await session.scalars(select(Organization.id).where(Organization.id.in_(ids)))).all())
        if missing := sorted(set(ids) - found):
            raise InvalidInput(
                "unknown organizations",
                details={"fields": [{"field": "organization_ids", "message": f"unknown: {missing}"}]},
            )


async def _platform_owner(request: Request, state: StateDep) -> Principal:
    principal = await authenticate(state, request.headers.get("authorization"))
    if not principal.platform_owner:
        raise PermissionDenied("only the platform owner may do this")
    return principal


@router.post("", status_code=201, response_model=OrganizationOut, openapi_extra=permission_extra("platform:owner"))
async def create_org(
    body: OrganizationIn, session: SessionDep, principal: Annotated[Principal, Depends(_platform_owner)]
) -> dict[str, Any]:
    await _check_relations(
        session,
        [body.parent_organization_id or "", *body.partner_organization_ids, *body.license_subscriber_organization_ids],
    )
    org = await create_organization(session, body.name)
    org.parent_organization_id = body.parent_organization_id
    org.partner_organization_ids = body.partner_organization_ids
    org.license_subscriber_organization_ids = body.license_subscriber_organization_ids
    audit.record(session, principal, "create", "organization", org.id, {"name": body.name}, org_id=org.id)
    await session.commit()
    return org_out(org)


@router.get("/{org_id}", response_model=OrganizationOut, openapi_extra=permission_extra("organization member"))
async def get_org(org_id: str, request: Request, session: SessionDep, state: StateDep) -> dict[str, Any]:
    principal = await authenticate(state, request.headers.get("authorization"))
    org = await session.get(Organization, org_id)
    if org is None or (principal.organization_id != org_id and not principal.platform_owner):
        raise NotFound("organization not found")
    return org_out(org)


@router.patch("/{org_id}", response_model=OrganizationOut, openapi_extra=permission_extra("platform:owner"))
async def patch_org(
    org_id: str,
    body: OrganizationPatch,
    session: SessionDep,
    principal: Annotated[Principal, Depends(_platform_owner)],
) -> dict[str, Any]:
    org = await session.get(Organization, org_id)
    if org is None:
        raise NotFound("organization not found")
    changes = body.model_dump(exclude_unset=True)
    await _check_relations(
        session,
        [
            changes.get("parent_organization_id") or "",
            *(changes.get("partner_organization_ids") or []),
            *(changes.get("license_subscriber_organization_ids") or []),
        ],
    )
    for field, value in changes.items():
        setattr(org, field, value)
    audit.record(session, principal, "update", "organization", org.id, changes, org_id=org.id)
    await session.commit()
    return org_out(org)


@router.get(
    "/{org_id}/iam/authentication_policy",
    response_model=AuthenticationPolicy,
)
async def get_policy(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.authentication_policy:get", "authentication_policy"))],
) -> dict[str, Any]:
    row = await session.get(PolicyRow, org_id)
    return AuthenticationPolicy.model_validate(row.policy if row else {}).model_dump()


@router.put(
    "/{org_id}/iam/authentication_policy",
    response_model=AuthenticationPolicy,
)
async def put_policy(
    org_id: str,
    body: AuthenticationPolicy,
    session: SessionDep,
    principal: Annotated[
        Principal, Depends(require("organization.authentication_policy:update", "authentication_policy"))
    ],
) -> dict[str, Any]:
    row = await session.get(PolicyRow, org_id)
    before = row.policy if row else {}
    if row is None:
        row = PolicyRow(organization_id=org_id, policy={})
        session.add(row)
    row.policy = body.model_dump()
    audit.record(session, principal, "update", "authentication_policy", org_id, {"before": before, "after": row.policy})
    await session.commit()
    return row.policy


@router.get(
    "/{org_id}/audit_log",
    response_model=Page[AuditEntryOut],
)
async def audit_log(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.audit_log:list", "audit_log"))],
    params: PageDep,
) -> Page[Any]:
    query = select(AuditEntry).where(AuditEntry.organization_id == org_id)
    rows, nxt = await paginate(session, query, params, AuditEntry.id, newest_first=True)
    items = [
        {
            "id": e.id,
            "at": e.at.isoformat(),
            "actor": {"kind": e.actor_kind, "id": e.actor_id},
            "action": e.action,
            "target": {"type": e.target_type, "id": e.target_id},
            "detail": e.detail,
        }
        for e in rows
    ]
    return page(items, nxt)
