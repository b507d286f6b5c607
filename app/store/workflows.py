"""Workflow topics, operation books and workflows: CRUD and loading the worker's config snapshot
(``TopicConfig``, a domain type: app/domain/workflows/topic_config.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.sharing import OrgRelations, may_receive
from app.domain.workflows.topic_config import TopicConfig, WorkflowConfig, compiled_filter
from app.store.models import DisabledEndpoint, OperationBook, Organization, Workflow, WorkflowTopic


async def find_topic(session: AsyncSession, org_id: str, id_or_key: str) -> WorkflowTopic | None:
    """A topic of ``org_id`` by id or by key (the spec allows either in the path); the id wins."""
    rows = (
        await session.scalars(
            select(WorkflowTopic).where(
                WorkflowTopic.organization_id == org_id,
                or_(WorkflowTopic.id == id_or_key, WorkflowTopic.key == id_or_key),
            )
        )
    ).all()
    return next((t for t in rows if t.id == id_or_key), rows[0] if rows else None)


async def find_in_org(session: AsyncSession, model: type[Any], org_id: str, obj_id: str) -> Any | None:
    """One row of ``model`` by id, only inside ``org_id`` (other orgs' rows are invisible)."""
    row = await session.get(model, obj_id)
    if row is None or row.organization_id != org_id:
        return None
    return row


async def count_workflows(
    session: AsyncSession, *, organization_id: str | None = None, topic_id: str | None = None, excluding: str = ""
) -> int:
    """How many workflows an organization has (on a topic, with ``topic_id``), but ``excluding``."""
    query = select(func.count()).select_from(Workflow).where(Workflow.id != excluding)
    if organization_id is not None:
        query = query.where(Workflow.organization_id == organization_id)
    if topic_id is not None:
        query = query.where(Workflow.topic_id == topic_id)
    return int(await session.scalar(query) or 0)


def workflow_config(
    w: Workflow, fields: list[dict[str, Any]], disabled: frozenset[int], receive_error: str | None = None
) -> WorkflowConfig:
    compiled, error = compiled_filter(w.filter, fields)
    return WorkflowConfig(
        w.id,
        w.name,
        w.mode,
        w.filter,
        w.sites,
        list(w.actions),
        compiled,
        error,
        disabled,
        w.organization_id,
        receive_error,
    )


async def load_topic_config(session: AsyncSession, org_id: str, topic_id: str) -> TopicConfig | None:
    topic = await find_in_org(session, WorkflowTopic, org_id, topic_id)
    if topic is None:
        return None
    workflows = (
        await session.scalars(
            select(Workflow).where(Workflow.topic_id == topic_id, Workflow.status == "ACTIVE").order_by(Workflow.id)
        )
    ).all()
    book_ids = {
        a.get("operation_book_id") for w in workflows for a in w.actions if a.get("type") == "RUN_OPERATION_BOOK"
    }
    books: dict[str, dict[str, Any]] = {}
    if book_ids:
        for book in (await session.scalars(select(OperationBook).where(OperationBook.id.in_(book_ids)))).all():
            books[book.id] = {
                "id": book.id,
                "organization_id": book.organization_id,
                "title": book.incident_title_template,
                "member_user_ids": list(book.member_user_ids),
                "member_group_ids": list(book.member_group_ids),
            }
    fields = list(topic.spec.get("fields") or [])
    refused = await receive_errors(session, topic, {w.organization_id for w in workflows})
    disabled: dict[str, set[int]] = {}
    if workflows:
        rows = await session.execute(
            select(DisabledEndpoint.workflow_id, DisabledEndpoint.action_index).where(
                DisabledEndpoint.workflow_id.in_([w.id for w in workflows])
            )
        )
        for workflow_id, index in rows:
            disabled.setdefault(workflow_id, set()).add(int(index))
    return TopicConfig(
        org_id=org_id,
        topic_id=topic.id,
        key=topic.key,
        spec=dict(topic.spec),
        workflows=tuple(
            workflow_config(w, fields, frozenset(disabled.get(w.id, ())), refused.get(w.organization_id))
            for w in workflows
        ),
        books=books,
    )


async def org_relations(session: AsyncSession, org_ids: set[str]) -> dict[str, OrgRelations]:
    rows = (await session.scalars(select(Organization).where(Organization.id.in_(list(org_ids))))).all()
    return {
        o.id: OrgRelations(
            o.id,
            o.parent_organization_id,
            frozenset(o.partner_organization_ids or ()),
            frozenset(o.license_subscriber_organization_ids or ()),
        )
        for o in rows
    }


async def receive_errors(session: AsyncSession, topic: WorkflowTopic, org_ids: set[str]) -> dict[str, str]:
    """Why each of ``org_ids`` other than the owner may not receive ``topic`` (absent: it may)."""
    others = {o for o in org_ids if o != topic.organization_id}
    if not others:
        return {}
    relations = await org_relations(session, others | {topic.organization_id})
    owner = relations.get(topic.organization_id, OrgRelations(topic.organization_id))
    out: dict[str, str] = {}
    for org in others:
        ok, why = may_receive(topic.spec, owner, relations.get(org, OrgRelations(org)))
        if not ok:
            out[org] = why
    return out


async def find_receivable_topic(
    session: AsyncSession, receiver_id: str, owner_id: str, id_or_key: str
) -> WorkflowTopic | None:
    """A topic of ``owner_id`` that ``receiver_id`` may receive (None as well when it may not:
    an organization that may not receive a topic cannot tell it from one that does not exist)."""
    topic = await find_topic(session, owner_id, id_or_key)
    if topic is None or (await receive_errors(session, topic, {receiver_id})):
        return None
    return topic


async def shared_topics(session: AsyncSession, receiver_id: str) -> list[WorkflowTopic]:
    """Topics of other organizations that ``receiver_id`` may receive, by id."""
    candidates = (
        await session.scalars(
            select(WorkflowTopic).where(WorkflowTopic.organization_id != receiver_id).order_by(WorkflowTopic.id)
        )
    ).all()
    candidates = [t for t in candidates if t.spec.get("access_scope") in ("public", "restricted")]
    relations = await org_relations(session, {t.organization_id for t in candidates} | {receiver_id})
    receiver = relations.get(receiver_id, OrgRelations(receiver_id))
    return [
        t
        for t in candidates
        if may_receive(t.spec, relations.get(t.organization_id, OrgRelations(t.organization_id)), receiver)[0]
    ]
