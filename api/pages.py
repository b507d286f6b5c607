"""Lists: one set of parameters (``?limit=``, ``?cursor=``) and one envelope
(``{"items": [...], "next_cursor": ...}``) for every list route (docs/api.md, "Lists").

Pages are keyset pages: a list is ordered by a unique key (an id, or a timestamp and an id),
``next_cursor`` is the key of a page's last item when more follow, and the next page starts
after it, so an item created or deleted meanwhile never shifts another onto two pages or none.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

import orjson
from fastapi import Depends, Query, Request
from fastapi.dependencies.models import Dependant
from pydantic import AwareDatetime, BeforeValidator
from sqlalchemy import ColumnElement, Select, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from api.models import Out
from app.errors import InvalidInput

T = TypeVar("T")
AnySelect = TypeVar("AnySelect", bound="Select[*tuple[Any, ...]]")  # a select of any columns
DEFAULT_LIMIT, MAX_LIMIT = 50, 500


class Page(Out, Generic[T]):
    """A route declares ``response_model=Page[ItemOut]``; its items are checked against ``ItemOut``."""

    items: list[T]
    next_cursor: str | None


def page(items: list[dict[str, Any]], next_cursor: str | None) -> Page[Any]:
    return Page[Any](items=items, next_cursor=next_cursor)


@dataclass(frozen=True, slots=True)
class PageParams:
    limit: int
    cursor: str | None


def _query_names(dependant: Dependant) -> set[str]:
    """The query parameters a route declares, its dependencies' included."""
    names = {field.alias for field in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


_DECLARED: dict[int, frozenset[str]] = {}


def _refuse_unknown_parameters(request: Request) -> None:
    """A list answers 422 for a query parameter it does not take (``?mode=BOGUS`` used to give the
    whole list, as if the filter had matched everything)."""
    route = request.scope.get("route")
    dependant: Dependant | None = getattr(route, "dependant", None)
    if dependant is None:
        return
    declared = _DECLARED.get(id(route))
    if declared is None:
        declared = _DECLARED[id(route)] = frozenset(_query_names(dependant))
    unknown = sorted({name for name in request.query_params if name not in declared})
    if unknown:
        raise InvalidInput(
            f"{unknown[0]} is not a parameter of this list (it takes {', '.join(sorted(declared))})",
            details={"fields": [{"field": name, "message": "unknown parameter"} for name in unknown[:20]]},
        )


def page_params(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="items per page")] = DEFAULT_LIMIT,
    cursor: Annotated[
        str | None, Query(min_length=1, max_length=512, description="next_cursor of the previous page")
    ] = None,
) -> PageParams:
    _refuse_unknown_parameters(request)
    return PageParams(limit, cursor)


PageDep = Annotated[PageParams, Depends(page_params)]


def _bad_cursor() -> InvalidInput:
    return InvalidInput(
        "cursor is not a next_cursor this list gave", details={"fields": [{"field": "cursor", "message": "invalid"}]}
    )


# what an id-keyed list's cursor looks like: an id, ``<prefix>_<base32 or hex>`` (app/domain/shared/ids.py)
_ID_CURSOR = re.compile(r"[a-z][a-z0-9]*_[0-9a-z]{10,64}")


def id_cursor(cursor: str | None) -> str | None:
    """``cursor`` when it can be an id a list gave as ``next_cursor``, else ``422`` (``?cursor=garbage``
    used to start the page after the text ``garbage``: the whole list, as if no cursor were sent)."""
    if cursor is not None and _ID_CURSOR.fullmatch(cursor) is None:
        raise _bad_cursor()
    return cursor


Order = Literal["newest", "oldest"]
OrderQuery = Annotated[Order, Query(description="newest first (the default) or oldest first")]
_NEWEST = "newest"


def time_cursor(at: datetime, key: str, *, newest_first: bool = False) -> str:
    """The opaque cursor of a ``(time, key)`` list: both values of the page's last item, and the order
    it was given for (oldest first: ``[at, key]``, as the timeline's cursors have always been)."""
    return base64.urlsafe_b64encode(orjson.dumps([at.isoformat(), key, *([_NEWEST] if newest_first else [])])).decode()


def read_time_cursor(cursor: str, *, newest_first: bool = False, prefix: str | None = None) -> tuple[datetime, str]:
    """The ``(time, key)`` a :func:`time_cursor` holds; ``422`` for anything else, for a cursor
    given for the other order (it would start the page somewhere meaningless), and, with ``prefix``
    (the list's id prefix, ``inc`` or ``evt``), for a cursor another list gave."""
    try:
        value: Any = orjson.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
    except (binascii.Error, orjson.JSONDecodeError, ValueError) as exc:
        raise _bad_cursor() from exc
    if not isinstance(value, list) or len(value) not in (2, 3) or not all(isinstance(v, str) for v in value):
        raise _bad_cursor()
    if len(value) == 3 and value[2] != _NEWEST:
        raise _bad_cursor()
    if (len(value) == 3) != newest_first:
        raise InvalidInput(
            "cursor was given for the other order: keep the order of the first page",
            details={"fields": [{"field": "cursor", "message": "given for the other order"}]},
        )
    at_text, key = value[0], value[1]
    try:
        at = datetime.fromisoformat(at_text)
        # the values stored are UTC: a cursor's time is compared as one (a naive one was never given)
        if at.tzinfo is None:
            raise ValueError("naive")
        at = at.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise _bad_cursor() from exc
    if not 0 < len(key) <= 128 or (prefix is not None and not key.startswith(f"{prefix}_")):
        raise _bad_cursor()
    return at, key


def keyset_after(
    query: AnySelect,
    cursor: str | None,
    at: InstrumentedAttribute[datetime],
    key: InstrumentedAttribute[str],
    *,
    newest_first: bool,
    prefix: str | None = None,
) -> AnySelect:
    """``query`` ordered by ``(at, key)`` (descending with ``newest_first``), from after ``cursor``
    (a :func:`time_cursor`; of this list's ids when ``prefix`` names it). The key makes the order
    total, so rows created meanwhile never move another row to two pages or none."""
    if cursor is not None:
        after_at, after_key = read_time_cursor(cursor, newest_first=newest_first, prefix=prefix)
        if newest_first:
            query = query.where(at <= after_at, or_(at < after_at, key < after_key))
        else:
            query = query.where(at >= after_at, or_(at > after_at, key > after_key))
    return query.order_by(at.desc(), key.desc()) if newest_first else query.order_by(at, key)


def cut(rows: Sequence[T], params: PageParams, key: Callable[[T], str]) -> tuple[list[T], str | None]:
    """The page out of ``rows`` (up to ``limit + 1``, in key order) and its ``next_cursor``."""
    items = list(rows[: params.limit])
    return items, key(items[-1]) if len(rows) > params.limit else None


async def paginate(
    session: AsyncSession,
    query: Select[Any],
    params: PageParams,
    key: InstrumentedAttribute[str],
    *,
    newest_first: bool = False,
) -> tuple[list[Any], str | None]:
    """One page of ``query``'s rows, ordered by the unique ``key`` (ascending, or descending with
    ``newest_first``: time-sortable ids), and the next cursor (the last row's key)."""
    if id_cursor(params.cursor) is not None:
        query = query.where(key < params.cursor if newest_first else key > params.cursor)
    query = query.order_by(key.desc() if newest_first else key).limit(params.limit + 1)
    rows = (await session.scalars(query)).all()
    return cut(rows, params, lambda row: str(getattr(row, key.key)))


async def page_in_org(
    session: AsyncSession, model: type[Any], org_id: str, params: PageParams, *where: ColumnElement[bool]
) -> tuple[list[Any], str | None]:
    """One page of an organization's ``model`` rows (matching ``where``), ordered by id (ids are
    time-sortable), and the next cursor: :func:`paginate` for the lists that are just that."""
    return await paginate(session, select(model).where(model.organization_id == org_id, *where), params, model.id)


async def paginate_by_time(
    session: AsyncSession,
    query: Select[Any],
    params: PageParams,
    at: InstrumentedAttribute[datetime],
    key: InstrumentedAttribute[str],
    *,
    newest_first: bool = False,
    prefix: str | None = None,
) -> tuple[list[Any], str | None]:
    """One page ordered by ``(at, key)`` (oldest first, or newest first) for rows whose ids are not
    time-sortable; the cursor is opaque (both values of the last row, and the order)."""
    query = keyset_after(query, params.cursor, at, key, newest_first=newest_first, prefix=prefix)
    rows = (await session.scalars(query.limit(params.limit + 1))).all()
    return cut(
        rows,
        params,
        lambda row: time_cursor(getattr(row, at.key), str(getattr(row, key.key)), newest_first=newest_first),
    )


# RFC 3339's date-time (the schema's ``format: date-time``): pydantic would also take a number (seconds
# since 1970) or a date alone for a datetime, which the documented parameter is not
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def _rfc3339_only(value: Any) -> Any:
    if not isinstance(value, str) or _RFC3339.fullmatch(value) is None:
        raise ValueError("not an RFC 3339 date-time with an offset (2026-12-01T10:00:00Z)")
    return value.upper()  # RFC 3339 allows t and z; the parser takes T and Z


TimeFilter = Annotated[AwareDatetime, BeforeValidator(_rfc3339_only)]


def filter_time(name: str, value: datetime | None) -> datetime | None:
    """A list's time filter in UTC, as the times are stored; ``422`` naming it for a time that has
    no UTC equivalent (``0001-01-01T00:00:00+14:00`` is before the first representable instant)."""
    try:
        return value.astimezone(UTC) if value is not None else None
    except OverflowError as exc:
        raise InvalidInput(
            f"{name} is out of range once in UTC",
            details={"fields": [{"field": name, "message": "out of range", "type": "value_error"}]},
        ) from exc


def filter_text(name: str, value: str | None) -> str | None:
    """A list's text filter, refused (``422`` naming it) when it holds the NUL character, which no
    stored value holds and PostgreSQL cannot even compare (a ``500`` otherwise)."""
    if value is not None and "\x00" in value:
        raise InvalidInput(
            f"{name} must not contain the NUL character",
            details={"fields": [{"field": name, "message": "must not contain U+0000", "type": "value_error"}]},
        )
    return value
