"""A topic field's ``values[].operators``: the spec's operators only, each on a type the spec's
table ("Workflow filter operators") allows it on; and the rewrite of stored lists."""

from __future__ import annotations

import pytest

from app.domain.workflows.filters.operators import operator_problem, spec_field_values, spec_operators

# The spec's table, written out again here so the tests do not read it from the code.
SPEC_TABLE: dict[str, set[str]] = {
    "=": {"string", "number", "boolean"},
    "!=": {"string", "number", "boolean"},
    ">": {"number"},
    ">=": {"number"},
    "<": {"number"},
    "<=": {"number"},
    "BETWEEN": {"number"},
    "IN": {"string", "number"},
    "NOT IN": {"string", "number"},
    "CONTAINS": {"string"},
    "STARTS WITH": {"string"},
    "ENDS WITH": {"string"},
    "EXISTS": {"string", "number", "boolean"},
    "IS NULL": {"string", "number", "boolean"},
    "IS NOT NULL": {"string", "number", "boolean"},
}
TYPES = ("number", "string", "boolean")


@pytest.mark.parametrize(("op", "ftype"), [(op, t) for op, types in SPEC_TABLE.items() for t in sorted(types)])
def test_an_operator_on_a_type_the_table_lists_is_allowed(op: str, ftype: str) -> None:
    assert operator_problem(op, ftype) is None
    assert operator_problem(op, "any") is None  # a field of type any takes every operator


@pytest.mark.parametrize(
    ("op", "ftype"), [(op, t) for op, types in SPEC_TABLE.items() for t in TYPES if t not in types]
)
def test_an_operator_on_a_type_the_table_does_not_list_is_refused(op: str, ftype: str) -> None:
    problem = operator_problem(op, ftype)
    assert problem is not None and "does not apply" in problem


@pytest.mark.parametrize(
    "op", ["==", "<>", "in", "between", "LIKE", "STARTS_WITH", "NOT  IN", " =", "", "CONTAINS\n", "IS_NULL"]
)
def test_other_spellings_are_not_operators(op: str) -> None:
    problem = operator_problem(op, "any")
    assert problem is not None and "not one of the spec's operators" in problem


def test_stored_spellings_are_rewritten_to_the_spec_and_the_rest_left_out() -> None:
    stored = ["==", "in", "not_in", "Starts With", "<>", "like", ">", "=", 3, "NOTIN", "between"]
    assert spec_operators("string", stored) == ["=", "IN", "NOT IN", "STARTS WITH", "!="]
    assert spec_operators("number", stored) == ["=", "IN", "NOT IN", "!=", ">", "BETWEEN"]
    assert spec_operators("boolean", ["is_null", "isnotnull", "exists", "CONTAINS"]) == [
        "IS NULL",
        "IS NOT NULL",
        "EXISTS",
    ]


def test_an_entry_that_allowed_nothing_is_left_out_not_widened_to_everything() -> None:
    values = [
        {"type": "string", "operators": ["LIKE"]},  # allowed nothing; [] would allow every string operator
        {"type": "number", "operators": []},  # every number operator, as before
        {"type": "number", "operators": ["=="]},
    ]
    assert spec_field_values(values) == [{"type": "number", "operators": []}, {"type": "number", "operators": ["="]}]
