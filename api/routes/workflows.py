"""Workflows: which topic, which mode, which filter, which actions."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import Field
from sqlalchemy import delete

from api.deps import SessionDep, StateDep, require
from api.limits import limits_exceeded
from api.members import ensure_members_of
from api.models import In, Out, Timestamp, omittable
from api.pages import Page, PageDep, page, page_in_org
from api.rows import row_in_org
from app.domain.delivery.webhooks import mask_secret, new_secret, secret_key
from app.domain.iam.principal import Principal
from app.domain.shared.ids import new_id
from app.domain.workflows.filters.validation import validate_filter
from app.domain.workflows.workflow import Action, RunOperationBook, SendPush, SendWebhook, webhook_url_problem
from app.errors import InvalidInput
from app.store import audit
from app.store.accounts import utcnow
from app.store.models import DisabledEndpoint, OperationBook, Workflow, WorkflowTopic
from app.store.workflows import count_workflows, find_in_org, find_receivable_topic, find_topic

router = APIRouter(prefix="/v1/organizations/{org_id}/workflows", tags=["workflows"])

MAX_ACTIONS = 100  # hard ceiling; TOCSIN_MAX_WORKFLOW_ACTIONS (20 by default) tightens it


class WorkflowIn(In):
    name: str = Field(min_length=1, max_length=200)
    topic: str = Field(min_length=1, max_length=200)
    topic_organization_id: str | None = None
    mode: Literal["ACTUAL", "DRILL", "TEST"]
    status: Literal["ACTIVE", "INACTIVE"] = "ACTIVE"
    filter: dict[str, Any] | None = None
    sites: list[str] | None = Field(default=None, max_length=1000)
    actions: list[Action] = Field(min_length=1, max_length=MAX_ACTIONS)


class WorkflowPatch(In):
    name: str = omittable(min_length=1, max_length=200)
    topic: str = omittable(min_length=1, max_length=200)
    mode: Literal["ACTUAL", "DRILL", "TEST"] = omittable()
    status: Literal["ACTIVE", "INACTIVE"] = omittable()
    filter: dict[str, Any] | None = None
    sites: list[str] | None = Field(default=None, max_length=1000)
    actions: list[Action] = omittable(min_length=1, max_length=MAX_ACTIONS)


class WorkflowOut(Out):
    id: str
    organization_id: str
    name: str
    topic_id: str | None = Field(
        description="null: detached, the organization owning the shared topic deleted it (the workflow is INACTIVE; "
        "a PATCH giving a topic attaches it again)"
    )
    topic_organization_id: str | None
    mode: Literal["ACTUAL", "DRILL", "TEST"]
    status: Literal["ACTIVE", "INACTIVE"]
    filter: dict[str, Any] | None
    sites: list[str] | None
    actions: list[dict[str, Any]] = Field(
        description="as given (see WorkflowIn); a webhook secret only as its first characters, except the one "
        "the server generated, shown once in the answer to the create"
    )
    created_at: Timestamp


def _invalid(field: str, message: str) -> InvalidInput:
    return InvalidInput(message, details={"fields": [{"field": field, "message": message}]})


def workflow_out(wf: Workflow, topic_organization_id: str | None = None) -> dict[str, Any]:
    return {
        "id": wf.id,
        "organization_id": wf.organization_id,
        "name": wf.name,
        "topic_id": wf.topic_id,
        "topic_organization_id": None if wf.topic_id is None else topic_organization_id or wf.organization_id,
        "mode": wf.mode,
        "status": wf.status,
        "filter": wf.filter,
        "sites": wf.sites,
        "actions": [_masked(a) for a in wf.actions],
        "created_at": wf.created_at.isoformat(),
    }


def _masked(action: dict[str, Any]) -> dict[str, Any]:
    """An action as read back: a webhook secret is never returned, only its first characters."""
    if action.get("secret"):
        return {**action, "secret": mask_secret(str(action["secret"]))}
    return action


async def _checked(
    session: SessionDep, state: StateDep, org_id: str, body: WorkflowIn, previous: list[dict[str, Any]] | None = None
) -> tuple[WorkflowTopic, list[dict[str, Any]]]:
    """The workflow's topic and its actions as stored, after every save-time check: the topic
    exists, the filter fits the topic's fields, sites need a site field, each action is usable."""
    owner = body.topic_organization_id or org_id
    if owner == org_id:
        topic = await find_topic(session, org_id, body.topic)
    else:  # a topic another organization shares with this one (one it may not receive is "not found")
        topic = await find_receivable_topic(session, org_id, owner, body.topic)
    if topic is None:
        raise _invalid("topic", "not found")
    limits = state.config_limits
    if len(body.actions) > limits.workflow_actions:
        raise limits_exceeded([("actions", f"at most {limits.workflow_actions} actions")])
    fields = list(topic.spec.get("fields") or [])
    errors = validate_filter(
        body.filter, fields, max_conditions=limits.filter_conditions, max_list_values=limits.filter_values
    )
    if errors:
        raise InvalidInput(
            "the filter does not fit the topic's fields",
            details={"fields": [{"field": path, "message": message} for path, message in errors]},
        )
    if body.sites and not any(f.get("site") is True for f in fields):
        raise _invalid("sites", 'the topic declares no site field (a field with "site": true)')
    actions: list[dict[str, Any]] = []
    for index, action in enumerate(body.actions):
        stored = action.model_dump(mode="json", exclude_none=True)
        if isinstance(action, RunOperationBook):
            if await find_in_org(session, OperationBook, org_id, action.operation_book_id) is None:
                raise _invalid(f"actions.{index}.operation_book_id", "not found")
        elif isinstance(action, SendPush):
            await ensure_members_of(
                session,
                org_id,
                (f"actions.{index}.user_ids", action.user_ids),
                (f"actions.{index}.group_ids", action.group_ids),
            )
        elif isinstance(action, SendWebhook):
            problem = webhook_url_problem(
                action.url,
                allow_http=state.settings.outbound.allow_private_networks,
                loopback_ports=state.settings.outbound.loopback_ports,
            )
            if problem:
                raise _invalid(f"actions.{index}.url", problem)
            stored["secret"] = _secret(index, action, previous)
        actions.append(stored)
    return topic, actions


async def _check_counts(
    session: SessionDep, state: StateDep, org_id: str, topic_id: str, moving: str | None = None
) -> None:
    """One more workflow for the organization (none when ``moving`` one to another topic) and for
    its workflows on the topic.

    422 VAL-001 when either is at its limit. Two concurrent creates may both pass: the limits
    bound growth, they are not exact quotas.
    """
    limits = state.config_limits
    if moving is None:
        count = await count_workflows(session, organization_id=org_id)
        if count >= limits.workflows_per_organization:
            raise limits_exceeded([("", f"the organization has {count} workflows, the most allowed; delete one first")])
    # the organization's own workflows on the topic: another organization receiving a shared topic
    # cannot spend the owner's (or another receiver's) quota
    count = await count_workflows(session, organization_id=org_id, topic_id=topic_id, excluding=moving or "")
    if count >= limits.workflows_per_topic:
        raise limits_exceeded([("topic", f"the organization has {count} workflows on this topic, the most allowed")])


def _secret(index: int, action: SendWebhook, previous: list[dict[str, Any]] | None) -> str:
    """The given secret (checked), the one already stored when it comes back masked or absent
    on an update of the same URL, or a new one."""
    old = previous[index] if previous is not None and index < len(previous) else None
    keep = old is not None and old.get("type") == "SEND_WEBHOOK" and old.get("url") == action.url
    if action.secret is None or (keep and old is not None and action.secret == mask_secret(str(old.get("secret")))):
        return str(old["secret"]) if keep and old is not None and old.get("secret") else new_secret()
    try:
        secret_key(action.secret)
    except ValueError as exc:
        raise _invalid(f"actions.{index}.secret", str(exc)) from None
    return action.secret


@router.post("", status_code=201, response_model=WorkflowOut)
async def create_workflow(
    org_id: str,
    body: WorkflowIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow:create"))],
) -> dict[str, Any]:
    topic, actions = await _checked(session, state, org_id, body)
    await _check_counts(session, state, org_id, topic.id)
    wf = Workflow(
        id=new_id("wfl"),
        organization_id=org_id,
        topic_id=topic.id,
        name=body.name,
        mode=body.mode,
        status=body.status,
        filter=body.filter,
        sites=body.sites or None,
        actions=actions,
        created_at=utcnow(),
    )
    session.add(wf)
    audit.record(session, principal, "create", "workflow", wf.id, {"name": wf.name, "topic_id": wf.topic_id})
    await session.commit()
    await _announce(state, org_id, topic)
    out = workflow_out(wf, topic.organization_id)
    # A secret the server generated is shown once, here; the caller's own one is never echoed.
    out["actions"] = [
        {**out_a, "secret": a["secret"]} if isinstance(b, SendWebhook) and b.secret is None else out_a
        for out_a, a, b in zip(out["actions"], actions, body.actions, strict=True)
    ]
    return out


@router.patch("/{workflow_id}", response_model=WorkflowOut)
async def update_workflow(
    org_id: str,
    workflow_id: str,
    body: WorkflowPatch,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow:update", "workflows/{workflow_id}"))],
) -> dict[str, Any]:
    """Change a workflow; any update also re-enables its webhook endpoints disabled by a 410."""
    wf = await _workflow(session, org_id, workflow_id)
    given = body.model_dump(exclude_unset=True)
    if wf.topic_id is None and "topic" not in given:
        raise _invalid("topic", "the workflow's topic was deleted by the organization owning it: give a topic")
    merged = WorkflowIn.model_validate(
        {
            "name": wf.name,
            "topic": wf.topic_id,
            "topic_organization_id": (await _topic_org(session, wf)),
            "mode": wf.mode,
            "status": wf.status,
            "filter": wf.filter,
            "sites": wf.sites,
            "actions": [_masked(a) for a in wf.actions],
            **given,
        }
    )
    topic, actions = await _checked(session, state, org_id, merged, previous=list(wf.actions))
    if topic.id != wf.topic_id:
        await _check_counts(session, state, org_id, topic.id, moving=wf.id)
    wf.name, wf.topic_id, wf.mode, wf.status = merged.name, topic.id, merged.mode, merged.status
    wf.filter, wf.sites, wf.actions = merged.filter, merged.sites or None, actions
    await session.execute(delete(DisabledEndpoint).where(DisabledEndpoint.workflow_id == wf.id))
    audit.record(session, principal, "update", "workflow", wf.id, {"fields": sorted(given)})
    await session.commit()
    await _announce(state, org_id, topic)
    return workflow_out(wf, topic.organization_id)


async def _workflow(session: SessionDep, org_id: str, workflow_id: str) -> Workflow:
    return await row_in_org(session, Workflow, org_id, workflow_id, "workflow")


async def _topic_org(session: SessionDep, wf: Workflow) -> str | None:
    if wf.topic_id is None:
        return None
    topic = await session.get(WorkflowTopic, wf.topic_id)
    return topic.organization_id if topic is not None else wf.organization_id


async def _announce(state: StateDep, org_id: str, topic: WorkflowTopic | None) -> None:
    """Workers cache a topic's workflows under the topic's organization: tell both."""
    await state.config_changed(org_id, "workflow")
    if topic is not None and topic.organization_id != org_id:
        await state.config_changed(topic.organization_id, "workflow")


@router.get("", response_model=Page[WorkflowOut])
async def list_workflows(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow:list"))],
    params: PageDep,
) -> Page[Any]:
    rows, nxt = await page_in_org(session, Workflow, org_id, params)
    return page([workflow_out(w, await _topic_org(session, w)) for w in rows], nxt)


@router.get("/{workflow_id}", response_model=WorkflowOut)
async def get_workflow(
    org_id: str,
    workflow_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.workflow:get", "workflows/{workflow_id}"))],
) -> dict[str, Any]:
    wf = await _workflow(session, org_id, workflow_id)
    return workflow_out(wf, await _topic_org(session, wf))


@router.delete("/{workflow_id}", status_code=204)
async def delete_workflow(
    org_id: str,
    workflow_id: str,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.workflow:delete", "workflows/{workflow_id}"))],
) -> None:
    wf = await _workflow(session, org_id, workflow_id)
    topic = await session.get(WorkflowTopic, wf.topic_id) if wf.topic_id is not None else None
    await session.delete(wf)
    audit.record(session, principal, "delete", "workflow", wf.id, {"name": wf.name})
    await session.commit()
    await _announce(state, org_id, topic)
