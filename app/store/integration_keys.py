"""PagerDuty Events v2 integration keys: each a ``routing_key`` bound to one workflow topic, stored
as its SHA-256 like an access token (app/domain/iam/tokens.py), shown once when created."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.tokens import INTEGRATION_KEY_PREFIX, generate_token, is_well_formed, token_hash
from app.domain.shared.ids import new_id
from app.store.accounts import utcnow
from app.store.models import IntegrationKey, WorkflowTopic


async def issue_key(session: AsyncSession, topic: WorkflowTopic, *, name: str = "") -> tuple[IntegrationKey, str]:
    """A new integration key of ``topic``; the plain routing key is returned here and never again."""
    plain = generate_token(INTEGRATION_KEY_PREFIX)
    row = IntegrationKey(
        id=new_id("ikey"),
        organization_id=topic.organization_id,
        topic_id=topic.id,
        name=name,
        key_hash=token_hash(plain),
        created_at=utcnow(),
    )
    session.add(row)
    await session.flush()
    return row, plain


async def find_key(session: AsyncSession, routing_key: str) -> tuple[IntegrationKey, WorkflowTopic] | None:
    """The unrevoked key whose routing key this is and its topic; None for anything else (a
    malformed, unknown or revoked key, or one whose topic is gone: the sender cannot tell which)."""
    if not is_well_formed(routing_key, INTEGRATION_KEY_PREFIX):
        return None
    query = (
        select(IntegrationKey, WorkflowTopic)
        .join(WorkflowTopic, WorkflowTopic.id == IntegrationKey.topic_id)
        .where(IntegrationKey.key_hash == token_hash(routing_key), IntegrationKey.revoked_at.is_(None))
        .where(WorkflowTopic.organization_id == IntegrationKey.organization_id)
    )
    found = (await session.execute(query)).first()
    return (found[0], found[1]) if found is not None else None
