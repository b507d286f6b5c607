"""Incident membership as something granted: nobody hands out the sight of incidents they do not see.

Without ``organization.incident:fullaccess`` one sees the incidents one is a member of: named in an
incident's ``member_user_ids`` / ``member_group_ids`` (from its operation book), or by an incident
binding. A group is a member of the incidents naming it and of every incident an operation book
naming it opens later; a user of those of the user and of its groups. So whoever adds a member to
such a group, or brings such a user back (reactivation, a token), must see those incidents
already: ``fullaccess`` over every incident of the organization, ``fullaccess`` on the incident or
membership of it (for a book: membership of the book). Else ``403 IAM-002`` with
``details.missing_permissions`` ``["organization.incident:fullaccess"]``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import ColumnElement, Text, cast, false, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.iam.evaluation import evaluate_pattern
from app.domain.iam.principal import Principal
from app.domain.iam.resource_names import resource_name
from app.errors import ChangeRefused
from app.store.models import Incident, OperationBook

FULL_ACCESS = "organization.incident:fullaccess"


def _naming(users: Any, groups: Any, user_ids: Collection[str], group_ids: Collection[str]) -> ColumnElement[bool]:
    # JSON lists read as text: a cheap pre-selection; exact membership is checked on the rows
    terms = [cast(users, Text).like(f'%"{u}"%') for u in user_ids]
    terms += [cast(groups, Text).like(f'%"{g}"%') for g in group_ids]
    return or_(false(), *terms)


async def ensure_sees_incidents_of(
    session: AsyncSession,
    principal: Principal,
    org_id: str,
    *,
    user_ids: Collection[str] = (),
    group_ids: Collection[str] = (),
    incident_ids: Collection[str] = (),
    what: str,
) -> None:
    """Refuse unless ``principal`` sees every incident the members ``user_ids`` / ``group_ids``
    are (or will be, through an operation book) members of, and the bound ``incident_ids``."""
    every_incident = resource_name(org_id, "incidents") + "<(/.*)?$>"
    if evaluate_pattern(principal.bindings, principal.roles, FULL_ACCESS, every_incident) is not None:
        return
    users, groups = set(user_ids), set(group_ids)
    if users or groups:
        books = await session.scalars(
            select(OperationBook).where(
                OperationBook.organization_id == org_id,
                _naming(OperationBook.member_user_ids, OperationBook.member_group_ids, users, groups),
            )
        )
        for book in books.all():
            named = bool(users & set(book.member_user_ids) or groups & set(book.member_group_ids))
            if named and not principal.is_member(book.member_user_ids, book.member_group_ids):
                raise _refused(what, f"operation book {book.id} makes them members of every incident it opens")
    condition = _naming(Incident.member_user_ids, Incident.member_group_ids, users, groups)
    if incident_ids:
        condition = or_(condition, Incident.id.in_(set(incident_ids)))
    incidents = await session.scalars(select(Incident).where(Incident.organization_id == org_id, condition))
    for inc in incidents.all():
        named = bool(inc.id in incident_ids or users & set(inc.member_user_ids) or groups & set(inc.member_group_ids))
        if not named:
            continue
        if not principal.can(FULL_ACCESS, resource_name(org_id, "incidents", inc.id)) and not (
            principal.sees_incident(inc.id, inc.member_user_ids, inc.member_group_ids)
        ):
            raise _refused(what, f"they are members of incident {inc.id}")


def _refused(what: str, why: str) -> ChangeRefused:
    return ChangeRefused(
        f"{what} would show incidents you do not see: {why}",
        details={"missing_permissions": [FULL_ACCESS]},
    )
