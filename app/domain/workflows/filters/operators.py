"""The spec's filter operators ("Workflow filter operators"): which value types each applies to,
the operators a topic field's ``values`` entries may list, and the stored spellings corrected."""

from __future__ import annotations

import operator as _op
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

NUMBER, STRING, BOOLEAN, ANY = "number", "string", "boolean", "any"
SCALARS = frozenset({NUMBER, STRING, BOOLEAN})

OPERATOR_TYPES: Final[Mapping[str, frozenset[str]]] = {
    "=": SCALARS,
    "!=": SCALARS,
    ">": frozenset({NUMBER}),
    ">=": frozenset({NUMBER}),
    "<": frozenset({NUMBER}),
    "<=": frozenset({NUMBER}),
    "BETWEEN": frozenset({NUMBER}),
    "IN": frozenset({STRING, NUMBER}),
    "NOT IN": frozenset({STRING, NUMBER}),
    "CONTAINS": frozenset({STRING}),
    "STARTS WITH": frozenset({STRING}),
    "ENDS WITH": frozenset({STRING}),
    "EXISTS": frozenset({ANY}),
    "IS NULL": frozenset({ANY}),
    "IS NOT NULL": frozenset({ANY}),
}
OPERATORS: Final = frozenset(OPERATOR_TYPES)
NO_VALUE_OPERATORS: Final = frozenset({"EXISTS", "IS NULL", "IS NOT NULL"})
COMPARISONS: Final[Mapping[str, Callable[[Any, Any], bool]]] = {
    ">": _op.gt,
    ">=": _op.ge,
    "<": _op.lt,
    "<=": _op.le,
}
COMBINATORS = ("all", "any", "not")
LEAF_KEYS = frozenset({"field", "operator", "value"})


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def kind_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int | float):
        return NUMBER
    if isinstance(value, str):
        return STRING
    return None


def fits(operator: str, field_type: str) -> bool:
    """Whether the spec's table lets ``operator`` apply to a field of ``field_type``."""
    types = OPERATOR_TYPES[operator]
    return field_type == ANY or ANY in types or field_type in types


def operator_problem(operator: str, field_type: str) -> str | None:
    """Why a topic field's ``values[].operators`` may not list ``operator`` for ``field_type``
    (not one of the spec's operators, or not for that type), or None when it may."""
    if operator not in OPERATOR_TYPES:
        return f"{operator!r} is not one of the spec's operators ({', '.join(OPERATOR_TYPES)})"
    if not fits(operator, field_type):
        return f"{operator} does not apply to {field_type} values (only {', '.join(sorted(OPERATOR_TYPES[operator]))})"
    return None


# Other spellings of the spec's operators (after upper-casing and ``_`` → space).
_OPERATOR_SPELLINGS: Final[Mapping[str, str]] = {
    "==": "=",
    "<>": "!=",
    "NOTIN": "NOT IN",
    "STARTSWITH": "STARTS WITH",
    "ENDSWITH": "ENDS WITH",
    "ISNULL": "IS NULL",
    "ISNOTNULL": "IS NOT NULL",
}


def spec_operators(field_type: str, operators: Sequence[Any]) -> list[str]:
    """A stored ``operators`` list in the spec's spelling: case, ``_`` for a space, ``==``, ``<>``
    and run-together words corrected; operators that are not the spec's, or not for
    ``field_type``, left out (they never allowed anything: a field allows only listed operators
    that fit its type); duplicates dropped. Used by the migration of stored topics."""
    out: list[str] = []
    for raw in operators:
        if not isinstance(raw, str):
            continue
        spelled = " ".join(raw.replace("_", " ").split()).upper()
        spelled = _OPERATOR_SPELLINGS.get(spelled, spelled)
        if operator_problem(spelled, field_type) is None and spelled not in out:
            out.append(spelled)
    return out


def spec_field_values(values: Sequence[Any]) -> list[Any]:
    """A stored field's ``values`` with :func:`spec_operators` applied to each entry. An entry whose
    operators all fail to be the spec's allowed nothing; it is left out rather than kept with an
    empty list, which would allow every operator of its type."""
    out: list[Any] = []
    for value in values:
        if not isinstance(value, Mapping) or not isinstance(value.get("operators"), list):
            out.append(value)
            continue
        operators = spec_operators(str(value.get("type", ANY)), value["operators"])
        if operators or not value["operators"]:
            out.append({**value, "operators": operators})
    return out
