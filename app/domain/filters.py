"""Workflow filters: checked when a workflow is saved, compiled once, evaluated per event; sites.

A filter is ``None`` (always true) or a node: a condition ``{"field", "operator", "value"}``
naming a topic field by ``id`` (no ``value`` for ``EXISTS``, ``IS NULL``, ``IS NOT NULL``), or
``{"all": [node, ...]}``, ``{"any": [node, ...]}``, ``{"not": node}``. The operators and the
types they apply to are the spec's table ("Workflow filter operators"), :data:`OPERATOR_TYPES`.

Choices where the spec and API.md are silent:

- Reading: the field's ``path`` is split on ``.`` and read key by key through nested objects. A
  missing key, or a non-object on the way, is *absent*, which is not JSON ``null``: ``EXISTS``
  is true iff present (even null), ``IS NULL`` iff present and null, ``IS NOT NULL`` iff present
  and not null; every other operator is false on an absent or null value. A key that itself
  contains a dot cannot be addressed.
- Types are JSON's: boolean, number (int or float, never bool; ``1 == 1.0``), string. Values of
  different types compare false, never an error; ``true`` never equals ``1``.
- ``!=`` and ``NOT IN`` are true only when the value has the type of the filter value (of one of
  the listed values for ``NOT IN``) and differs; on absent, null or another type they are false
  like every other operator. So ``{"not": {= x}}`` and ``{!= x}`` differ on such values.
- ``BETWEEN [lo, hi]`` is inclusive. String operators are case-sensitive. Operators are written
  as in the spec, upper case.
- Allowed operators: each of a field's ``values`` entries allows its ``operators`` that fit its
  ``type`` (every operator fitting the type when its list is empty); a field without entries is
  of type ``any``. A condition's value must have a type declared by an entry allowing the
  operator (type ``any`` takes every type the operator does).
- Bounds: :data:`MAX_DEPTH`, :data:`MAX_LEAVES`, :data:`MAX_LIST_VALUES`, :data:`MAX_STRING_CHARS`;
  numbers are finite and integers within the signed 64-bit range (app/domain/json_bounds.py).
- Traces (:meth:`CompiledFilter.evaluate`): one clause per condition, in filter order, every
  condition evaluated. Where there is nothing, the key is left out rather than set to null: no
  ``actual`` when the path is absent, no ``value`` for operators without one. Sites follow the
  same rule for ``value``.
"""

from __future__ import annotations

import math
import operator as _op
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from app.domain.json_bounds import number_problem
from app.errors import TocsinError

MAX_DEPTH: Final = 10
MAX_LEAVES: Final = 100
MAX_LIST_VALUES: Final = 1000
MAX_STRING_CHARS: Final = 1024
# Each condition has at most MAX_DEPTH - 1 ancestors, so a filter within the bounds never has more.
MAX_NODES: Final = MAX_DEPTH * MAX_LEAVES

NUMBER, STRING, BOOLEAN, ANY = "number", "string", "boolean", "any"
_SCALARS = frozenset({NUMBER, STRING, BOOLEAN})

OPERATOR_TYPES: Final[Mapping[str, frozenset[str]]] = {
    "=": _SCALARS,
    "!=": _SCALARS,
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
_COMPARISONS: Final[Mapping[str, Callable[[Any, Any], bool]]] = {
    ">": _op.gt,
    ">=": _op.ge,
    "<": _op.lt,
    "<=": _op.le,
}
_COMBINATORS = ("all", "any", "not")
_LEAF_KEYS = frozenset({"field", "operator", "value"})


class _Absent:
    """The value at a path that is not there (not JSON null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()

Errors = list[tuple[str, str]]
Clause = dict[str, Any]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int | float):
        return NUMBER
    if isinstance(value, str):
        return STRING
    return None


def _fits(operator: str, field_type: str) -> bool:
    """Whether the spec's table lets ``operator`` apply to a field of ``field_type``."""
    types = OPERATOR_TYPES[operator]
    return field_type == ANY or ANY in types or field_type in types


def operator_problem(operator: str, field_type: str) -> str | None:
    """Why a topic field's ``values[].operators`` may not list ``operator`` for ``field_type``
    (not one of the spec's operators, or not for that type), or None when it may."""
    if operator not in OPERATOR_TYPES:
        return f"{operator!r} is not one of the spec's operators ({', '.join(OPERATOR_TYPES)})"
    if not _fits(operator, field_type):
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


@dataclass(frozen=True, slots=True)
class _Field:
    id: str
    path: str
    # (declared type, operators this entry allows), one per entry of the field's ``values``.
    entries: tuple[tuple[str, frozenset[str]], ...]


def _index(fields: Sequence[Mapping[str, Any]]) -> dict[str, _Field]:
    index: dict[str, _Field] = {}
    for field in fields:
        entries = []
        for value in field.get("values") or ():
            field_type = str(value.get("type", ANY))
            fitting = frozenset(op for op in OPERATORS if _fits(op, field_type))
            listed = frozenset(value.get("operators") or ())
            entries.append((field_type, listed & fitting if listed else fitting))
        field_id = str(field.get("id"))
        index.setdefault(field_id, _Field(field_id, str(field.get("path", "")), tuple(entries) or ((ANY, OPERATORS),)))
    return index


def _scalar_problem(value: Any, kinds: frozenset[str]) -> str | None:
    kind = _kind(value)
    if kind not in kinds:
        names = sorted(kinds)
        return "must be a " + (" or ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " or " + names[-1])
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number"
    if (problem := number_problem(value)) is not None:
        return problem  # an integer the records (orjson, 64-bit) could not carry
    if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
        return f"must be at most {MAX_STRING_CHARS} characters"
    return None


class _Validator:
    def __init__(self, fields: dict[str, _Field], max_leaves: int, max_values: int) -> None:
        self.fields = fields
        self.max_leaves = max_leaves
        self.max_values = max_values
        self.errors: Errors = []
        self.leaves = 0
        self.nodes = 0

    def error(self, path: str, message: str) -> None:
        self.errors.append((path, message))

    def node(self, node: Any, path: str, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            if self.nodes == MAX_NODES + 1:
                self.error("filter", f"more than {MAX_NODES} nodes")
            return
        if depth > MAX_DEPTH:
            self.error(path, f"nested deeper than {MAX_DEPTH} levels")
            return
        if not isinstance(node, dict):
            self.error(path, "must be an object: a condition, all, any or not")
            return
        combinators = [key for key in _COMBINATORS if key in node]
        if not combinators:
            if _LEAF_KEYS.isdisjoint(node):
                self.error(path, "must be a condition {field, operator, value}, or all, any or not")
            else:
                self.leaf(node, path)
            return
        if len(combinators) > 1 or not _LEAF_KEYS.isdisjoint(node):
            self.error(path, "must be exactly one of all, any, not, or a condition")
            return
        key = combinators[0]
        for other in node:
            if other != key:
                self.error(f"{path}.{other}", "unknown key")
        child, child_path = node[key], f"{path}.{key}"
        if key == "not":
            self.node(child, child_path, depth + 1)
        elif not isinstance(child, list) or not child:
            self.error(child_path, f"{key} needs a non-empty list of conditions")
        elif len(child) > self.max_leaves:
            self.error(child_path, f"at most {self.max_leaves} elements")
        else:
            for i, element in enumerate(child):
                self.node(element, f"{child_path}.{i}", depth + 1)

    def leaf(self, node: dict[str, Any], path: str) -> None:
        self.leaves += 1
        for key in node:
            if key not in _LEAF_KEYS:
                self.error(f"{path}.{key}", "unknown key")
        field: _Field | None = None
        field_id = node.get("field")
        if "field" not in node:
            self.error(f"{path}.field", "required")
        elif not isinstance(field_id, str) or (field := self.fields.get(field_id)) is None:
            self.error(f"{path}.field", f"unknown field {field_id!r}: not one of the topic's fields")
        operator = node.get("operator")
        if "operator" not in node:
            self.error(f"{path}.operator", "required")
            return
        if not isinstance(operator, str) or operator not in OPERATOR_TYPES:
            self.error(f"{path}.operator", f"unknown operator {operator!r}")
            return
        if field is None:
            kinds = frozenset(OPERATOR_TYPES[operator] & _SCALARS)
        else:
            if not any(_fits(operator, field_type) for field_type, _ in field.entries):
                types = ", ".join(sorted({field_type for field_type, _ in field.entries}))
                self.error(f"{path}.operator", f"{operator} does not apply to field {field.id!r} of type {types}")
                return
            allowing = [field_type for field_type, allowed in field.entries if operator in allowed]
            if not allowing:
                self.error(f"{path}.operator", f"{operator} is not one of the operators field {field.id!r} allows")
                return
            op_kinds = OPERATOR_TYPES[operator] & _SCALARS
            kinds = frozenset(k for t in allowing for k in (op_kinds if t == ANY else op_kinds & {t}))
        self.value(node, operator, kinds, f"{path}.value")

    def value(self, node: dict[str, Any], operator: str, kinds: frozenset[str], path: str) -> None:
        if operator in NO_VALUE_OPERATORS:
            if "value" in node:
                self.error(path, f"{operator} takes no value")
            return
        if "value" not in node:
            self.error(path, f"{operator} needs a value")
            return
        value = node["value"]
        if operator == "BETWEEN":
            if not isinstance(value, list) or len(value) != 2:
                self.error(path, "BETWEEN needs [lo, hi], two numbers")
                return
            problems = [(i, _scalar_problem(bound, kinds)) for i, bound in enumerate(value)]
            for i, problem in problems:
                if problem:
                    self.error(f"{path}.{i}", problem)
            if not any(problem for _, problem in problems) and value[0] > value[1]:
                self.error(path, "BETWEEN [lo, hi] needs lo <= hi")
        elif operator in ("IN", "NOT IN"):
            if not isinstance(value, list) or not 1 <= len(value) <= self.max_values:
                self.error(path, f"{operator} needs a list of 1 to {self.max_values} values")
                return
            for i, element in enumerate(value):
                if problem := _scalar_problem(element, kinds):
                    self.error(f"{path}.{i}", problem)
                    break  # one is enough to fix the list; a thousand would drown the others
        elif problem := _scalar_problem(value, kinds):
            self.error(path, problem)


def validate_filter(
    filter: Any,
    fields: Sequence[Mapping[str, Any]],
    *,
    max_conditions: int = MAX_LEAVES,
    max_list_values: int = MAX_LIST_VALUES,
) -> Errors:
    """Check a workflow filter against its topic's ``fields``; ``[(json path, message)]``, empty if valid.

    Paths start at ``filter`` (``filter.all.1.any.0.value``), as the API reports field errors.
    ``max_conditions`` and ``max_list_values`` (a deployment's settings) can only tighten
    :data:`MAX_LEAVES` and :data:`MAX_LIST_VALUES`.
    """
    if filter is None:
        return []
    max_leaves = min(max_conditions, MAX_LEAVES)
    validator = _Validator(_index(fields), max_leaves, min(max_list_values, MAX_LIST_VALUES))
    validator.node(filter, "filter", 1)
    if validator.leaves > max_leaves:
        validator.errors.insert(0, ("filter", f"at most {max_leaves} conditions, not {validator.leaves}"))
    return validator.errors


class InvalidFilter(TocsinError, ValueError):
    """A filter :func:`validate_filter` refuses; validate before compiling. ``errors`` lists why."""

    def __init__(self, errors: Errors) -> None:
        super().__init__("; ".join(f"{path}: {message}" for path, message in errors))
        self.errors = errors


Reader = Callable[[Any], Any]
Test = Callable[[Any], bool]
Matcher = Callable[[Any], bool]
Tracer = Callable[[Any, list[Clause]], bool]


def _reader(path: str) -> Reader:
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


def _same_kind(value: Any) -> Test:
    if isinstance(value, bool):
        return lambda actual: isinstance(actual, bool)
    if isinstance(value, str):
        return lambda actual: isinstance(actual, str)
    return _is_number


def _test(operator: str, value: Any) -> Test:
    """The predicate on the value read (possibly :data:`ABSENT`); never raises on JSON values."""
    if operator == "EXISTS":
        return lambda actual: actual is not ABSENT
    if operator == "IS NULL":
        return lambda actual: actual is None
    if operator == "IS NOT NULL":
        return lambda actual: actual is not None and actual is not ABSENT
    if operator in ("=", "!="):
        same = _same_kind(value)
        if operator == "=":
            return lambda actual: same(actual) and actual == value
        return lambda actual: same(actual) and actual != value
    if operator in _COMPARISONS:
        compare = _COMPARISONS[operator]
        return lambda actual: _is_number(actual) and compare(actual, value)
    if operator == "BETWEEN":
        lo, hi = value
        return lambda actual: _is_number(actual) and lo <= actual <= hi
    if operator in ("IN", "NOT IN"):
        strings = frozenset(v for v in value if isinstance(v, str))
        numbers = frozenset(v for v in value if _is_number(v))
        inside = operator == "IN"

        def member(actual: Any) -> bool:
            if isinstance(actual, str):
                return bool(strings) and (actual in strings) == inside
            if _is_number(actual):
                return bool(numbers) and (actual in numbers) == inside
            return False

        return member
    if operator == "CONTAINS":
        return lambda actual: isinstance(actual, str) and value in actual
    if operator == "STARTS WITH":
        return lambda actual: isinstance(actual, str) and actual.startswith(value)
    if operator == "ENDS WITH":
        return lambda actual: isinstance(actual, str) and actual.endswith(value)
    raise InvalidFilter([("filter", f"unknown operator {operator!r}")])


def _compile(node: dict[str, Any], fields: dict[str, _Field]) -> tuple[Matcher, Tracer]:
    if "not" in node:
        match_inner, trace_inner = _compile(node["not"], fields)
        return (lambda data: not match_inner(data)), (lambda data, clauses: not trace_inner(data, clauses))
    for key, wanted in (("all", False), ("any", True)):
        if key in node:
            compiled = [_compile(child, fields) for child in node[key]]
            matchers = tuple(m for m, _ in compiled)
            tracers = tuple(t for _, t in compiled)

            def match(data: Any, matchers: tuple[Matcher, ...] = matchers, wanted: bool = wanted) -> bool:
                for m in matchers:
                    if m(data) is wanted:
                        return wanted
                return not wanted

            def trace(
                data: Any, clauses: list[Clause], tracers: tuple[Tracer, ...] = tracers, wanted: bool = wanted
            ) -> bool:
                results = [t(data, clauses) for t in tracers]  # every condition, for the trace
                return wanted in results if wanted else False not in results

            return match, trace
    field, operator = fields[node["field"]], node["operator"]
    read, test = _reader(field.path), _test(operator, node.get("value"))
    template: Clause = {"field": field.id, "path": field.path, "operator": operator}
    if operator not in NO_VALUE_OPERATORS:
        template["value"] = node["value"]

    def match_leaf(data: Any) -> bool:
        return test(read(data))

    def trace_leaf(data: Any, clauses: list[Clause]) -> bool:
        actual = read(data)
        result = test(actual)
        clause = dict(template)
        if actual is not ABSENT:
            clause["actual"] = actual
        clause["result"] = result
        clauses.append(clause)
        return result

    return match_leaf, trace_leaf


def _always(data: Any) -> bool:
    return True


def _always_traced(data: Any, clauses: list[Clause]) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class CompiledFilter:
    """A validated filter turned into closures; build once per workflow, evaluate per event."""

    matcher: Matcher
    tracer: Tracer

    def matches(self, data: Any) -> bool:
        """Whether ``data`` satisfies the filter; stops at the first deciding condition."""
        return self.matcher(data)

    def evaluate(self, data: Any) -> tuple[bool, list[Clause]]:
        """The result and one clause per condition, in filter order, for the event trace.

        A clause is ``{field, path, operator, value, actual, result}``; ``actual`` is left out
        when the path is absent, ``value`` for operators that take none.
        """
        clauses: list[Clause] = []
        return self.tracer(data, clauses), clauses


def compile_filter(filter: Any, fields: Sequence[Mapping[str, Any]]) -> CompiledFilter:
    """Compile a filter for evaluation; ``None`` always matches. Raises :class:`InvalidFilter`."""
    if errors := validate_filter(filter, fields):
        raise InvalidFilter(errors)
    if filter is None:
        return CompiledFilter(_always, _always_traced)
    match, trace = _compile(filter, _index(fields))
    return CompiledFilter(match, trace)


def site_matches(
    sites: Sequence[str] | None, fields: Sequence[Mapping[str, Any]], data: Any
) -> tuple[bool, dict[str, Any]]:
    """Whether the value at the topic's site field (``"site": true``) is one of ``sites``.

    No sites (``None`` or empty) always matches. With sites, a topic without a site field never
    does (the detail says why). Only a string value equal to one of the ids matches. The detail
    is ``{site_field, value, sites, result}`` for the event trace; ``value`` is left out when absent.
    """
    if not sites:
        return True, {"sites": None}
    site_field = next((f for f in fields if f.get("site") is True), None)
    if site_field is None:
        reason = "the topic declares no site field"
        return False, {"site_field": None, "sites": list(sites), "result": False, "reason": reason}
    value = _reader(str(site_field.get("path", "")))(data)
    result = isinstance(value, str) and value in sites
    detail: dict[str, Any] = {"site_field": site_field.get("id")}
    if value is not ABSENT:
        detail["value"] = value
    detail.update(sites=list(sites), result=result)
    return result, detail


def fit_problems(filter: Any, sites: Sequence[str] | None, fields: Sequence[Mapping[str, Any]]) -> Errors:
    """What keeps a workflow's filter and sites from working with a topic's ``fields``
    (``[(json path, message)]``, empty when they fit): the save-time checks of a workflow."""
    errors = validate_filter(filter, fields)
    if sites and not any(f.get("site") is True for f in fields):
        errors.append(("sites", 'the topic declares no site field (a field with "site": true)'))
    return errors


def broken_by_fields_change(
    filter: Any, sites: Sequence[str] | None, old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> Errors:
    """Why a topic's change of ``fields`` from ``old`` to ``new`` would silently disable a
    workflow — its filter names a field removed or retyped, uses an operator no longer allowed,
    or its sites lose the site field — or ``[]`` when it still works (or never did with ``old``:
    that is not this change's doing)."""
    if filter is None and not sites:
        return []
    problems = fit_problems(filter, sites, new)
    return problems if problems and not fit_problems(filter, sites, old) else []
