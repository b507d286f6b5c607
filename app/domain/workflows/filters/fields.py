"""A topic's fields as a filter sees them: each field's id, path and the operators its entries allow,
and the value read at a path of an event's data (:data:`ABSENT` where the path is not there)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from app.domain.workflows.filters.operators import ANY, OPERATORS, fits


class _Absent:
    """The value at a path that is not there (not JSON null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


@dataclass(frozen=True, slots=True)
class Field:
    id: str
    path: str
    # (declared type, operators this entry allows), one per entry of the field's ``values``.
    entries: tuple[tuple[str, frozenset[str]], ...]


def field_index(fields: Sequence[Mapping[str, Any]]) -> dict[str, Field]:
    index: dict[str, Field] = {}
    for field in fields:
        entries = []
        for value in field.get("values") or ():
            field_type = str(value.get("type", ANY))
            fitting = frozenset(op for op in OPERATORS if fits(op, field_type))
            listed = frozenset(value.get("operators") or ())
            entries.append((field_type, listed & fitting if listed else fitting))
        field_id = str(field.get("id"))
        index.setdefault(field_id, Field(field_id, str(field.get("path", "")), tuple(entries) or ((ANY, OPERATORS),)))
    return index


Reader = Callable[[Any], Any]


def reader(path: str) -> Reader:
    keys = tuple(path.split("."))
    if len(keys) == 1:
        (key,) = keys

        def read_one(data: Any) -> Any:
            return data.get(key, ABSENT) if isinstance(data, dict) else ABSENT

        return read_one

    def read(data: Any) -> Any:
        for key in keys:
            if not isinstance(data, dict):
                return ABSENT
            data = data.get(key, ABSENT)
        return data

    return read
