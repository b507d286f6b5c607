"""Workflow topics."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any, Literal, NamedTuple

from fastapi import APIRouter, Depends, Query, Request
from sqlalchemy import delete, select, update

from api.deps import SessionDep, StateDep, authenticate, authorize_topic, permission_extra, require
from api.errors import CONFLICT
from api.pages import Page, PageDep, cut, id_cursor, page, page_in_org
from api.schemas.topics import ControlStateOut, SharedTopicOut, TopicIn, TopicOut, TopicPatch
from app.clock import now_ms
from app.domain.events.control import POLICY_CHANGED, POLICY_TYPE_CHANGED_KEY, declared_type, policy_type
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import topic_names
from app.domain.shared.ids import new_id
from app.domain.shared.milliseconds import ms_to_datetime
from app.domain.workflows.filters.validation import broken_by_fields_change
from app.errors import Conflict, InvalidInput, NotFound
from app.store import audit
from app.store.accounts import utcnow
from app.store.db import commit_unique
from app.store.models import IntegrationKey, RoleBinding, Workflow, WorkflowTopic
from app.store.results import control_view, resolve_episode_incidents
from app.store.workflows import find_topic, receive_errors, shared_topics

router = APIRouter(prefix="/v1/organizations/{org_id}/workflow_topics", tags=["workflow topics"])
shared_router = APIRouter(prefix="/v1/organizations/{org_id}/shared_workflow_topics", tags=["workflow topics"])
# What a receiving organization sees of another's topic: not whom else the owner shares it with.
_OWNER_ONLY = frozenset(
    {
        "allowed_organization_ids",
        "share_with_partner_orgs",
        "share_with_license_subscribers",
        "share_with_allowed_orgs",
        "share_with_sibling_orgs",
    }
)


def topic_out(topic: WorkflowTopic) -> dict[str, Any]:
    return {
        "id": topic.id,
        "organization_id": topic.organization_id,
        **{k: v for k, v in topic.spec.items() if k != POLICY_TYPE_CHANGED_KEY},  # the worker's, not a field
        "key": topic.key,
        "status": topic.status,
        "created_at": topic.created_at.isoformat(),
    }


class TopicAccess(NamedTuple):
    principal: Principal
    found: WorkflowTopic | None  # None: the caller may, but no such topic (404 once the request is valid)

    @property
    def topic(self) -> WorkflowTopic:
        if self.found is None:
            raise NotFound("workflow topic not found")
        return self.found


def topic_access(permission: str) -> Callable[..., Coroutine[Any, Any, TopicAccess]]:
    """A dependency: the caller, and the topic the path names by id or key, once the caller holds
    ``permission`` on it under either of its names (a binding on the id or on the key)."""

    async def dependency(
        org_id: str, topic: str, request: Request, state: StateDep, session: SessionDep
    ) -> TopicAccess:
        principal = await authenticate(state, request.headers.get("authorization"))
        if principal.organization_id != org_id:
            raise NotFound("not found")
        row = await find_topic(session, org_id, topic) if "\n" not in topic else None
        authorize_topic(principal, org_id, permission, topic, (row.id, row.key) if row is not None else None)
        return TopicAccess(principal, row)

    return dependency


@router.post(
    "",
    status_code=201,
    response_model=TopicOut,
    response_model_exclude_unset=True,
    responses=CONFLICT,
)
async def create_topic(
    org_id: str,
    body: TopicIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow_topic:create"))],
) -> dict[str, Any]:
    spec = body.model_dump(mode="json", exclude={"key", "status"}, exclude_none=True)
    topic = WorkflowTopic(
        id=new_id("wtp"), organization_id=org_id, key=body.key, spec=spec, status=body.status, created_at=utcnow()
    )
    session.add(topic)
    audit.record(session, principal, "create", "workflow_topic", topic.id, {"key": body.key})
    await commit_unique(session, f"a workflow topic with key {body.key!r} already exists")
    await state.config_changed(org_id, "workflow_topic")
    return topic_out(topic)


@router.get(
    "",
    response_model=Page[TopicOut],
    response_model_exclude_unset=True,
)
async def list_topics(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow_topic:list"))],
    params: PageDep,
) -> Page[Any]:
    rows, nxt = await page_in_org(session, WorkflowTopic, org_id, params)
    return page([topic_out(t) for t in rows], nxt)


@router.get(
    "/{topic}",
    response_model=TopicOut,
    response_model_exclude_unset=True,
    openapi_extra=permission_extra("organization.workflow_topic:get"),
)
async def get_topic(
    org_id: str,
    topic: str,
    session: SessionDep,
    access: Annotated[TopicAccess, Depends(topic_access("organization.workflow_topic:get"))],
) -> dict[str, Any]:
    return topic_out(access.topic)


@router.delete(
    "/{topic}",
    status_code=204,
    responses=CONFLICT,
    openapi_extra=permission_extra("organization.workflow_topic:delete"),
)
async def delete_topic(
    org_id: str,
    topic: str,
    session: SessionDep,
    state: StateDep,
    access: Annotated[TopicAccess, Depends(topic_access("organization.workflow_topic:delete"))],
) -> None:
    row, principal = access.topic, access.principal
    users = (
        await session.execute(select(Workflow.id, Workflow.organization_id).where(Workflow.topic_id == row.id))
    ).all()
    own = sorted(w for w, o in users if o == org_id)
    others = sorted((o, w) for w, o in users if o != org_id)
    if own:
        # Only the caller's own workflows block it, and only they are named.
        raise Conflict(
            "workflows still use this topic",
            details={"workflow_id": own[0], "workflows": own, "other_organizations_workflows": len(others)},
        )
    if others:
        # Workflows of organizations receiving the shared topic are theirs to keep: detached (no
        # topic) and INACTIVE, with an entry in their organization's audit log saying why.
        await _set_receivers_inactive(
            session,
            org_id,
            row,
            others,
            action="detach",
            reason="the organization owning its shared topic deleted the topic; the workflow is INACTIVE "
            "until a PATCH gives it another topic",
        )
        await session.flush()
    # its integration keys go with it (the foreign key's cascade is not enforced on SQLite)
    await session.execute(delete(IntegrationKey).where(IntegrationKey.topic_id == row.id))
    await session.delete(row)
    # Bindings on the topic's own two names go with it: a topic created later under the same key
    # is another topic and starts without them (bindings with a regex tail are left as written).
    names = topic_names(org_id, row.id, row.key)
    on_topic = RoleBinding.organization_id == org_id, RoleBinding.resource.in_(names)
    dropped = (await session.scalars(select(RoleBinding.id).where(*on_topic))).all()
    if dropped:
        await session.execute(delete(RoleBinding).where(*on_topic))
    audit.record(
        session,
        principal,
        "delete",
        "workflow_topic",
        row.id,
        {"key": row.key, "detached_workflows": len(others), "bindings": len(dropped)},
    )
    await session.commit()
    await state.config_changed(org_id, "workflow_topic")
    if dropped:
        await state.config_changed(org_id, "bindings")
    for other_org in sorted({o for o, _w in others}):
        await state.config_changed(other_org, "workflow")


@router.patch(
    "/{topic}",
    response_model=TopicOut,
    response_model_exclude_unset=True,
    responses=CONFLICT,
    openapi_extra=permission_extra("organization.workflow_topic:update"),
)
async def update_topic(
    org_id: str,
    topic: str,
    body: TopicPatch,
    session: SessionDep,
    state: StateDep,
    access: Annotated[TopicAccess, Depends(topic_access("organization.workflow_topic:update"))],
) -> dict[str, Any]:
    """Change a topic. A new ``control_policy_profile`` replaces the old one whole; open episodes
    keep their state and follow the new thresholds from their next event, except that a change of
    policy type ends them: their open incidents are resolved here (reason ``policy_changed``), and
    the worker releases each episode before deciding its key's next record
    (docs/concepts/event-control.md). A change of ``fields`` that would disable the caller's own workflows is refused
    (``409``); receivers' workflows it breaks are set INACTIVE, each told in its own audit log."""
    row, principal = access.topic, access.principal
    # the fields sent, each whole (a nested object's defaults included, as a create stores them)
    full = body.model_dump(mode="json")
    changes = {field: full[field] for field in body.model_fields_set}
    if "key" in changes:
        raise InvalidInput("the key of a topic cannot change")
    status = changes.pop("status", None)
    if status is not None:
        row.status = status
    old_fields = list(row.spec.get("fields") or [])
    old_type = declared_type(row.spec.get("control_policy_profile"))
    if "control_policy_profile" in changes and changes["control_policy_profile"] is None:
        changes.pop("control_policy_profile")
        row.spec = {k: v for k, v in row.spec.items() if k != "control_policy_profile"}
    row.spec = {**row.spec, **changes}
    broken_elsewhere: list[tuple[str, str]] = []
    if "fields" in changes:
        broken_elsewhere = await _refuse_disabling_workflows(session, org_id, row, old_fields)
        if broken_elsewhere:
            await _set_receivers_inactive(
                session,
                org_id,
                row,
                broken_elsewhere,
                action="deactivate",
                reason="the organization owning its shared topic changed the topic's fields and the "
                "workflow's filter or sites no longer fit them; it is INACTIVE until changed",
            )
    detail: dict[str, Any] = {"fields": sorted(body.model_fields_set)}
    if broken_elsewhere:
        detail["receivers_workflows_deactivated"] = len(broken_elsewhere)
    new_type = declared_type(row.spec.get("control_policy_profile"))
    if new_type != old_type:
        # The open episodes end: their incidents are resolved now, with the reason, and the worker
        # releases each episode (RESOLVE, policy_changed) at its key's next record. It is told when:
        # an episode whose last NOTIFY is older ended, even once the type is back (METRIC → BYPASS → METRIC).
        row.spec = {**row.spec, POLICY_TYPE_CHANGED_KEY: now_ms()}
        message = f"resolved: {POLICY_CHANGED} ({old_type} → {new_type})"
        detail["incidents_resolved"] = await resolve_episode_incidents(session, row.id, message, principal.account_id)
    audit.record(session, principal, "update", "workflow_topic", row.id, detail)
    await session.commit()
    await state.config_changed(org_id, "workflow_topic")
    for other_org in sorted({o for o, _w in broken_elsewhere}):
        await state.config_changed(other_org, "workflow")
    return topic_out(row)


async def _refuse_disabling_workflows(
    session: SessionDep, org_id: str, row: WorkflowTopic, old_fields: list[dict[str, Any]]
) -> list[tuple[str, str]]:
    """``409`` when the topic's new ``fields`` (already in ``row.spec``) would silently disable one
    of the caller's own workflows: a filter on a field removed or retyped, an operator no longer
    allowed, sites without a site field. It names them and their problems. Workflows of other
    organizations receiving the shared topic never block the owner (each organization is limited
    by its own workflows only): those the change breaks are returned, ``(organization, workflow)``,
    for the caller to set INACTIVE with an entry in their own organization's audit log; a workflow
    of an organization that may no longer receive the topic runs nothing and is left alone."""
    new_fields = list(row.spec.get("fields") or [])
    workflows = (await session.scalars(select(Workflow).where(Workflow.topic_id == row.id).order_by(Workflow.id))).all()
    broken = [(w, p) for w in workflows if (p := broken_by_fields_change(w.filter, w.sites, old_fields, new_fields))]
    if not broken:
        return []
    refused = await receive_errors(session, row, {w.organization_id for w, _ in broken})
    own = [(w, p) for w, p in broken if w.organization_id == org_id]
    others = [
        (w.organization_id, w.id)
        for w, _ in broken
        if w.organization_id != org_id and w.organization_id not in refused and w.status == "ACTIVE"
    ]
    if own:
        names = ", ".join(w.id for w, _ in own)
        raise Conflict(
            f"the change of fields would make workflows stop matching; change them first: {names}",
            details={
                "workflows": [
                    {"id": w.id, "problems": [{"field": path, "message": text} for path, text in problems]}
                    for w, problems in own
                ],
                "other_organizations_workflows": len(others),
            },
        )
    return others


async def _set_receivers_inactive(
    session: SessionDep,
    org_id: str,
    row: WorkflowTopic,
    others: list[tuple[str, str]],
    *,
    action: str,
    reason: str,
) -> None:
    """Receivers' workflows (``(organization, workflow)``) the owner's change or deletion of the
    topic reached: INACTIVE (never a workflow that quietly stops matching; a deleted topic also
    detaches them), each with an entry in its own organization's audit log saying why."""
    values: dict[str, Any] = {"status": "INACTIVE", **({"topic_id": None} if action == "detach" else {})}
    await session.execute(update(Workflow).where(Workflow.id.in_([w for _o, w in others])).values(**values))
    detail = {"reason": reason, "topic_id": row.id, "topic_key": row.key}
    for other_org, workflow_id in others:
        audit.record_as(session, other_org, ("organization", org_id), action, "workflow", workflow_id, detail)


@router.get(
    "/{topic}/control_state",
    response_model=ControlStateOut,
    openapi_extra=permission_extra("organization.workflow_topic:get"),
)
async def control_state(
    org_id: str,
    topic: str,
    session: SessionDep,
    access: Annotated[TopicAccess, Depends(topic_access("organization.workflow_topic:get"))],
    partition_key: Annotated[str, Query(min_length=1, max_length=256)],
    status: Literal["ACTUAL", "DRILL", "TEST"] = "ACTUAL",
) -> dict[str, Any]:
    """The control state of one partition key, as the worker last reported it (it lags the
    worker by at most a trace batch). A partition key never seen has the empty state."""
    row = access.topic
    view = await control_view(session, org_id, row.id, status, partition_key)
    v: dict[str, Any] = view.view if view is not None else {}
    due = v.get("auto_resolve_at_ms")
    return {
        "partition_key": partition_key,
        "status": status,
        "policy_type": v.get("policy_type", policy_type(row.spec.get("control_policy_profile")).value),
        "episode_open": v.get("episode_open", False),
        "peak": v.get("peak", {}),
        "last_values": v.get("last_values", {}),
        "stable_count": v.get("stable_count", 0),
        "set_members": v.get("set_members", []),
        "last_decision": v.get("last_decision"),
        "auto_resolve_at": ms_to_datetime(due).isoformat() if due is not None else None,
        "updated_at": view.updated_at.isoformat() if view is not None else None,
    }


@shared_router.get(
    "",
    response_model=Page[SharedTopicOut],
    response_model_exclude_unset=True,
)
async def list_shared_topics(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow_topic:list"))],
    params: PageDep,
) -> Page[Any]:
    """Topics of other organizations this one may receive (public, or restricted and shared with
    it); a workflow subscribes with ``topic`` and ``topic_organization_id``."""
    receivable = sorted(await shared_topics(session, org_id), key=lambda t: t.id)
    after = id_cursor(params.cursor) or ""
    rows, nxt = cut([t for t in receivable if t.id > after], params, lambda t: t.id)
    return page([{k: v for k, v in topic_out(t).items() if k not in _OWNER_ONLY} for t in rows], nxt)
