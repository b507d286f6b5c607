"""A validated filter compiled once into closures, evaluated per event (with a trace of every
condition when the event's trace is written)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.workflows.filters.fields import ABSENT, Field, field_index, reader
from app.domain.workflows.filters.operators import COMPARISONS, NO_VALUE_OPERATORS, is_number
from app.domain.workflows.filters.validation import InvalidFilter, validate_filter

Clause = dict[str, Any]


Test = Callable[[Any], bool]
Matcher = Callable[[Any], bool]
Tracer = Callable[[Any, list[Clause]], bool]


def _same_kind(value: Any) -> Test:
    if isinstance(value, bool):
        return lambda actual: isinstance(actual, bool)
    if isinstance(value, str):
        return lambda actual: isinstance(actual, str)
    return is_number


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
    if operator in COMPARISONS:
        compare = COMPARISONS[operator]
        return lambda actual: is_number(actual) and compare(actual, value)
    if operator == "BETWEEN":
        lo, hi = value
        return lambda actual: is_number(actual) and lo <= actual <= hi
    if operator in ("IN", "NOT IN"):
        strings = frozenset(v for v in value if isinstance(v, str))
        numbers = frozenset(v for v in value if is_number(v))
        inside = operator == "IN"

        def member(actual: Any) -> bool:
            if isinstance(actual, str):
                return bool(strings) and (actual in strings) == inside
            if is_number(actual):
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


def _compile(node: dict[str, Any], fields: dict[str, Field]) -> tuple[Matcher, Tracer]:
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
    read, test = reader(field.path), _test(operator, node.get("value"))
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
    match, trace = _compile(filter, field_index(fields))
    return CompiledFilter(match, trace)
