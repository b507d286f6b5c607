"""A workflow filter checked against its topic's fields, when the workflow is saved and when the
topic's fields change: the shape, the bounds, each condition's field, operator and value."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from app.domain.shared.json_bounds import number_problem
from app.domain.workflows.filters.fields import Field, field_index
from app.domain.workflows.filters.operators import (
    ANY,
    COMBINATORS,
    LEAF_KEYS,
    NO_VALUE_OPERATORS,
    OPERATOR_TYPES,
    SCALARS,
    fits,
    kind_of,
)
from app.errors import TocsinError

MAX_DEPTH: Final = 10
MAX_LEAVES: Final = 100
MAX_LIST_VALUES: Final = 1000
MAX_STRING_CHARS: Final = 1024
# Each condition has at most MAX_DEPTH - 1 ancestors, so a filter within the bounds never has more.
MAX_NODES: Final = MAX_DEPTH * MAX_LEAVES


Errors = list[tuple[str, str]]


def _scalar_problem(value: Any, kinds: frozenset[str]) -> str | None:
    kind = kind_of(value)
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
    def __init__(self, fields: dict[str, Field], max_leaves: int, max_values: int) -> None:
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
        combinators = [key for key in COMBINATORS if key in node]
        if not combinators:
            if LEAF_KEYS.isdisjoint(node):
                self.error(path, "must be a condition {field, operator, value}, or all, any or not")
            else:
                self.leaf(node, path)
            return
        if len(combinators) > 1 or not LEAF_KEYS.isdisjoint(node):
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
            if key not in LEAF_KEYS:
                self.error(f"{path}.{key}", "unknown key")
        field: Field | None = None
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
            kinds = frozenset(OPERATOR_TYPES[operator] & SCALARS)
        else:
            if not any(fits(operator, field_type) for field_type, _ in field.entries):
                types = ", ".join(sorted({field_type for field_type, _ in field.entries}))
                self.error(f"{path}.operator", f"{operator} does not apply to field {field.id!r} of type {types}")
                return
            allowing = [field_type for field_type, allowed in field.entries if operator in allowed]
            if not allowing:
                self.error(f"{path}.operator", f"{operator} is not one of the operators field {field.id!r} allows")
                return
            op_kinds = OPERATOR_TYPES[operator] & SCALARS
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
    validator = _Validator(field_index(fields), max_leaves, min(max_list_values, MAX_LIST_VALUES))
    validator.node(filter, "filter", 1)
    if validator.leaves > max_leaves:
        validator.errors.insert(0, ("filter", f"at most {max_leaves} conditions, not {validator.leaves}"))
    return validator.errors


class InvalidFilter(TocsinError, ValueError):
    """A filter :func:`validate_filter` refuses; validate before compiling. ``errors`` lists why."""

    def __init__(self, errors: Errors) -> None:
        super().__init__("; ".join(f"{path}: {message}" for path, message in errors))
        self.errors = errors


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
