"""Operation books: what an incident created by a workflow looks like."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import Field
from sqlalchemy import select

from api.deps import SessionDep, StateDep, require
from api.errors import CONFLICT
from api.members import ensure_members_of
from api.models import In, Out, Timestamp
from api.pages import Page, PageDep, page, page_in_org
from api.rows import row_in_org
from app.domain.iam.principal import Principal
from app.domain.shared.ids import new_id
from app.errors import Conflict
from app.store import audit
from app.store.accounts import utcnow
from app.store.models import OperationBook, Workflow

router = APIRouter(prefix="/v1/organizations/{org_id}/operation_books", tags=["operation books"])


class BookIn(In):
    name: str = Field(min_length=1, max_length=200)
    incident_title_template: str = Field(min_length=1, max_length=1000)
    member_user_ids: list[str] = Field(default_factory=list, max_length=1000)
    member_group_ids: list[str] = Field(default_factory=list, max_length=1000)


class BookOut(Out):
    id: str
    organization_id: str
    name: str
    incident_title_template: str
    member_user_ids: list[str]
    member_group_ids: list[str]
    created_at: Timestamp


def book_out(book: OperationBook) -> dict[str, Any]:
    return {
        "id": book.id,
        "organization_id": book.organization_id,
        "name": book.name,
        "incident_title_template": book.incident_title_template,
        "member_user_ids": book.member_user_ids,
        "member_group_ids": book.member_group_ids,
        "created_at": book.created_at.isoformat(),
    }


async def _get(session: SessionDep, org_id: str, book_id: str) -> OperationBook:
    return await row_in_org(session, OperationBook, org_id, book_id, "operation book")


@router.post("", status_code=201, response_model=BookOut)
async def create_book(
    org_id: str,
    body: BookIn,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[Principal, Depends(require("organization.operation_book:create"))],
) -> dict[str, Any]:
    await ensure_members_of(
        session, org_id, ("member_user_ids", body.member_user_ids), ("member_group_ids", body.member_group_ids)
    )
    book = OperationBook(id=new_id("obk"), organization_id=org_id, created_at=utcnow(), **body.model_dump())
    session.add(book)
    audit.record(session, principal, "create", "operation_book", book.id, {"name": book.name})
    await session.commit()
    await state.config_changed(org_id, "operation_book")
    return book_out(book)


@router.get("", response_model=Page[BookOut])
async def list_books(
    org_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.operation_book:list"))],
    params: PageDep,
) -> Page[Any]:
    rows, nxt = await page_in_org(session, OperationBook, org_id, params)
    return page([book_out(b) for b in rows], nxt)


@router.get("/{book_id}", response_model=BookOut)
async def get_book(
    org_id: str,
    book_id: str,
    session: SessionDep,
    _p: Annotated[Principal, Depends(require("organization.operation_book:get", "operation_books/{book_id}"))],
) -> dict[str, Any]:
    return book_out(await _get(session, org_id, book_id))


@router.delete(
    "/{book_id}",
    status_code=204,
    responses=CONFLICT,
)
async def delete_book(
    org_id: str,
    book_id: str,
    session: SessionDep,
    state: StateDep,
    principal: Annotated[
        Principal, Depends(require("organization.operation_book:delete", "operation_books/{book_id}"))
    ],
) -> None:
    book = await _get(session, org_id, book_id)
    for wf in (await session.scalars(select(Workflow).where(Workflow.organization_id == org_id))).all():
        if any(a.get("operation_book_id") == book.id for a in wf.actions):
            raise Conflict("workflows still use this operation book", details={"workflow_id": wf.id})
    await session.delete(book)
    audit.record(session, principal, "delete", "operation_book", book.id, {"name": book.name})
    await session.commit()
    await state.config_changed(org_id, "operation_book")
