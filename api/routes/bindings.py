"""IAM bindings of users, groups, service accounts and incidents; the ``iam:check`` question.

No ``from __future__ import annotations`` here: the per-subject route factory builds its
dependencies from local variables, which FastAPI resolves only from evaluated annotations.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import Field
from sqlalchemy import delete, select

from api.deps import SessionDep, StateDep, require
from api.guard import ensure_can_grant
from api.limits import limits_exceeded
from api.models import In, Out
from app.domain.iam.permissions import is_valid_permission
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import MAX_NAME_LENGTH, InvalidName, resource_name, validate_binding_resource
from app.domain.shared.ids import new_id
from app.errors import InvalidInput, NotFound
from app.store import audit
from app.store.accounts import count_bindings, load_principal, org_roles
from app.store.models import Account, Group, Incident, IncidentMember, RoleBinding
from app.store.workflows import find_in_org

router = APIRouter(prefix="/v1/organizations/{org_id}", tags=["iam"])
PERM = "organization.iam_policy"


class ResourceBinding(In):
    resource: str = Field(min_length=1, max_length=MAX_NAME_LENGTH)
    role_id: str = Field(min_length=1, max_length=40)


MAX_BINDINGS = 10_000  # hard ceiling; TOCSIN_MAX_BINDINGS_PER_SUBJECT (200 by default) tightens it


class ResourceBindings(In):
    bindings: list[ResourceBinding] = Field(max_length=MAX_BINDINGS)


class IncidentBinding(In):
    role_id: str = Field(min_length=1, max_length=40)
    user_ids: list[str] = Field(default_factory=list, max_length=1000)
    group_ids: list[str] = Field(default_factory=list, max_length=1000)


class IncidentBindings(In):
    bindings: list[IncidentBinding] = Field(max_length=MAX_BINDINGS)


class ResourceBindingOut(Out):
    resource: str
    role_id: str


class ResourceBindingsOut(Out):
    bindings: list[ResourceBindingOut]


class IncidentBindingOut(Out):
    role_id: str
    user_ids: list[str]
    group_ids: list[str]


class IncidentBindingsOut(Out):
    bindings: list[IncidentBindingOut]


class GrantOut(Out):
    binding: ResourceBindingOut
    role_id: str


class CheckOut(Out):
    allowed: bool
    granted_by: GrantOut | None


SUBJECTS = {"users": "user_account", "groups": "group", "service_accounts": "service_account"}


def _invalid(field: str, message: str) -> InvalidInput:
    return InvalidInput(message, details={"fields": [{"field": field, "message": message}]})


async def _subject(session: SessionDep, org_id: str, collection: str, subject_id: str) -> str:
    kind = SUBJECTS[collection]
    row: Account | Group | None
    if kind == "group":
        row = await find_in_org(session, Group, org_id, subject_id)
    else:
        row = await find_in_org(session, Account, org_id, subject_id)
        row = row if row is not None and row.kind == kind else None
    if row is None:
        raise NotFound(f"{collection[:-1].replace('_', ' ')} not found")
    return kind


async def _resource_bindings(session: SessionDep, kind: str, subject_id: str) -> dict[str, Any]:
    rows = await session.scalars(
        select(RoleBinding)
        .where(RoleBinding.subject_kind == kind, RoleBinding.subject_id == subject_id)
        .order_by(RoleBinding.id)
    )
    return {"bindings": [{"resource": b.resource, "role_id": b.role_id} for b in rows.all()]}


def _subject_router(collection: str) -> None:
    path = f"/{collection}/{{subject_id}}/iam"
    name = f"{collection}/{{subject_id}}"

    @router.get(
        path,
        response_model=ResourceBindingsOut,
        name=f"get_{collection}_iam",
    )
    async def get_bindings(
        org_id: str,
        subject_id: str,
        session: SessionDep,
        _p: Annotated[Principal, Depends(require(f"{PERM}:get", name))],
    ) -> dict[str, Any]:
        kind = await _subject(session, org_id, collection, subject_id)
        return await _resource_bindings(session, kind, subject_id)

    @router.put(
        path,
        response_model=ResourceBindingsOut,
        name=f"put_{collection}_iam",
    )
    async def put_bindings(
        org_id: str,
        subject_id: str,
        body: ResourceBindings,
        session: SessionDep,
        state: StateDep,
        principal: Annotated[Principal, Depends(require(f"{PERM}:update", name))],
    ) -> dict[str, Any]:
        kind = await _subject(session, org_id, collection, subject_id)
        limits = state.config_limits
        wanted = len({(b.resource, b.role_id) for b in body.bindings})
        if wanted > limits.bindings_per_subject:
            raise limits_exceeded([("bindings", f"at most {limits.bindings_per_subject} bindings per subject")])
        others = await count_bindings(session, org_id, excluding_subject=(kind, subject_id))
        if others + wanted > limits.bindings_per_organization:
            raise limits_exceeded(
                [
                    (
                        "bindings",
                        f"the organization would have {others + wanted} bindings, more than the "
                        f"{limits.bindings_per_organization} allowed",
                    )
                ]
            )
        roles = await org_roles(session, org_id)
        before = await _resource_bindings(session, kind, subject_id)
        existing = {(b["resource"], b["role_id"]) for b in before["bindings"]}
        for i, binding in enumerate(body.bindings):
            try:
                validate_binding_resource(binding.resource, org_id)
            except InvalidName as exc:
                raise _invalid(f"bindings.{i}.resource", str(exc)) from exc
            if binding.role_id not in roles:
                raise _invalid(f"bindings.{i}.role_id", "unknown role")
            if (binding.resource, binding.role_id) not in existing:
                ensure_can_grant(principal, roles, binding.role_id, binding.resource)
        await session.execute(
            delete(RoleBinding).where(RoleBinding.subject_kind == kind, RoleBinding.subject_id == subject_id)
        )
        unique = list(dict.fromkeys((b.resource, b.role_id) for b in body.bindings))
        session.add_all(
            RoleBinding(
                id=new_id("bnd"),
                organization_id=org_id,
                subject_kind=kind,
                subject_id=subject_id,
                resource=resource,
                role_id=role_id,
            )
            for resource, role_id in unique
        )
        after = {"bindings": [{"resource": r, "role_id": role} for r, role in unique]}
        audit.record(session, principal, "set_bindings", kind, subject_id, {"before": before, "after": after})
        await session.commit()
        await state.config_changed(org_id, "bindings")
        return after


for _collection in SUBJECTS:
    _subject_router(_collection)


async def _incident(session: SessionDep, org_id: str, incident_id: str) -> Incident:
    incident = await session.get(Incident, incident_id)
    if incident is None or incident.organization_id != org_id:
        raise NotFound("incident not found")
    return incident


async def _incident_bindings(session: SessionDep, incident_id: str) -> dict[str, Any]:
    rows = (
        await session.scalars(
            select(IncidentMember)
            .where(IncidentMember.incident_id == incident_id)
            .order_by(IncidentMember.binding_index)
        )
    ).all()
    grouped: dict[int, dict[str, Any]] = {}
    for row in rows:
        entry = grouped.setdefault(row.binding_index, {"role_id": row.role_id, "user_ids": [], "group_ids": []})
        entry["user_ids" if row.member_kind == "user" else "group_ids"].append(row.member_id)
    return {"bindings": [grouped[i] for i in sorted(grouped)]}


@router.get("/incidents/{incident_id}/iam", response_model=IncidentBindingsOut)
async def get_incident_bindings(
    org_id: str,
    incident_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require(f"{PERM}:get", "incidents/{incident_id}"))],
) -> dict[str, Any]:
    await _incident(session, org_id, incident_id)
    return await _incident_bindings(session, incident_id)


@router.put("/incidents/{incident_id}/iam", response_model=IncidentBindingsOut)
async def put_incident_bindings(
    org_id: str,
    incident_id: str,
    body: IncidentBindings,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require(f"{PERM}:update", "incidents/{incident_id}"))],
) -> dict[str, Any]:
    await _incident(session, org_id, incident_id)
    if len(body.bindings) > state.config_limits.bindings_per_subject:
        raise limits_exceeded(
            [("bindings", f"at most {state.config_limits.bindings_per_subject} bindings per incident")]
        )
    roles = await org_roles(session, org_id)
    resource = resource_name(org_id, "incidents", incident_id)
    users = {u for b in body.bindings for u in b.user_ids}
    groups = {g for b in body.bindings for g in b.group_ids}
    known_users = set(
        (
            await session.scalars(
                select(Account.id).where(
                    Account.id.in_(users), Account.organization_id == org_id, Account.kind == "user_account"
                )
            )
        ).all()
    )
    known_groups = set(
        (await session.scalars(select(Group.id).where(Group.id.in_(groups), Group.organization_id == org_id))).all()
    )
    if users - known_users or groups - known_groups:
        raise _invalid(
            "bindings", f"unknown users or groups: {sorted((users - known_users) | (groups - known_groups))}"
        )
    for i, binding in enumerate(body.bindings):
        if binding.role_id not in roles:
            raise _invalid(f"bindings.{i}.role_id", "unknown role")
        # Membership grants the role on the incident and its sub-resources (timeline, form answers).
        ensure_can_grant(principal, roles, binding.role_id, resource + "<(/.*)?$>")
    before = await _incident_bindings(session, incident_id)
    await session.execute(delete(IncidentMember).where(IncidentMember.incident_id == incident_id))
    for index, binding in enumerate(body.bindings):
        members = [("user", u) for u in binding.user_ids] + [("group", g) for g in binding.group_ids]
        session.add_all(
            IncidentMember(
                id=new_id("imb"),
                organization_id=org_id,
                incident_id=incident_id,
                binding_index=index,
                role_id=binding.role_id,
                member_kind=kind,
                member_id=member,
            )
            for kind, member in dict.fromkeys(members)
        )
    after = {"bindings": [b.model_dump() for b in body.bindings]}
    audit.record(session, principal, "set_bindings", "incident", incident_id, {"before": before, "after": after})
    await session.commit()
    await state.config_changed(org_id, "bindings")
    return after


class CheckSubject(In):
    kind: Literal["service_account", "user_account"]
    id: str = Field(max_length=40)


class CheckIn(In):
    principal: CheckSubject
    permission: str = Field(max_length=200)
    resource: str = Field(max_length=MAX_NAME_LENGTH)


@router.post("/iam:check", response_model=CheckOut)
async def check(
    org_id: str,
    body: CheckIn,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require(f"{PERM}:get"))],
) -> dict[str, Any]:
    """Whether a principal holds a permission on a resource, and which binding grants it."""
    if not is_valid_permission(body.permission):
        raise _invalid("permission", "not a permission")
    account: Account | None = await find_in_org(session, Account, org_id, body.principal.id)
    if account is None or account.kind != body.principal.kind:
        raise NotFound("principal not found")
    subject = await load_principal(session, account, token_id="")
    grant = subject.grant(body.permission, body.resource) if account.status == "ACTIVE" else None
    return {
        "allowed": grant is not None,
        "granted_by": None
        if grant is None
        else {
            "binding": {"resource": grant.binding.resource, "role_id": grant.binding.role_id},
            "role_id": grant.role_id,
        },
    }
