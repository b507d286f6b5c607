"""The row a path names by id, inside the path's organization, or 404 RES-001: another
organization's rows are as absent as rows that do not exist (never reveal they exist)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import NotFound
from app.store.models import Account
from app.store.workflows import find_in_org

M = TypeVar("M")


def _any(_row: Any) -> bool:
    return True


async def row_in_org(
    session: AsyncSession, model: type[M], org_id: str, row_id: str, what: str, *, belongs: Callable[[M], bool] = _any
) -> M:
    """The ``model`` row ``row_id`` of ``org_id`` for which ``belongs`` holds; else NotFound("<what> not found")."""
    row = await find_in_org(session, model, org_id, row_id)
    if row is None or not belongs(row):
        raise NotFound(f"{what} not found")
    return cast(M, row)


async def account_in_org(session: AsyncSession, org_id: str, account_id: str, kind: str) -> Account:
    """The organization's account ``account_id`` of ``kind`` (``service_account`` or ``user``)."""
    return await row_in_org(
        session, Account, org_id, account_id, kind.replace("_", " "), belongs=lambda account: account.kind == kind
    )
