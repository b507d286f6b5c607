"""Ids of users and groups a client names (operation-book members, push recipients): the
organization's own only."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import InvalidInput
from app.store.accounts import unknown_members


async def ensure_members_of(
    session: AsyncSession, org_id: str, users: tuple[str, list[str]], groups: tuple[str, list[str]]
) -> None:
    """422 VAL-001 naming every id that is not a user / group of the organization, ``users`` and
    ``groups`` as ``(field path, ids)``: another organization's ids and ids that do not exist alike."""
    unknown_users, unknown_groups = await unknown_members(session, org_id, users[1], groups[1])
    problems = [(users[0], f"not users of this organization: {unknown_users}")] if unknown_users else []
    if unknown_groups:
        problems.append((groups[0], f"not groups of this organization: {unknown_groups}"))
    if problems:
        raise InvalidInput(
            "; ".join(f"{field}: {message}" for field, message in problems),
            details={"fields": [{"field": field, "message": message} for field, message in problems]},
        )
