"""Workflow filters, from the spec's operator table ("Workflow filter operators") and API.md
"Workflows": every operator on every type it lists, positive and negative; every operator on
every type it does not list, refused when the workflow is saved; absent versus null; nested
paths; all/any/not; malformed filters refused at the right JSON path; the event-trace clauses;
sites. Properties: the short-circuiting ``matches`` agrees with the traced ``evaluate``, whose
result follows all/any/not from its clauses, and neither raises on arbitrary JSON data.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.workflows.filters.compiled import compile_filter
from app.domain.workflows.filters.sites import site_matches
from app.domain.workflows.filters.validation import (
    MAX_DEPTH,
    MAX_LEAVES,
    MAX_LIST_VALUES,
    MAX_STRING_CHARS,
    InvalidFilter,
    broken_by_fields_change,
    validate_filter,
)

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
    "EXISTS": {"string", "number", "boolean", "any"},
    "IS NULL": {"string", "number", "boolean", "any"},
    "IS NOT NULL": {"string", "number", "boolean", "any"},
}
TYPES = ("number", "string", "boolean")
NO_VALUE = {"EXISTS", "IS NULL", "IS NOT NULL"}


def field(fid: str, path: str, ftype: str, operators: list[str] | None = None, site: bool = False) -> dict[str, Any]:
    values = [{"value_source": "value", "type": ftype, "operators": operators or []}]
    return {"id": fid, "name_en": fid, "path": path, "values": values, "site": site}


# One field per declared type, all reading "v"; plus nested, restricted, mixed and untyped fields.
FIELDS = [
    field("number", "v", "number"),
    field("string", "v", "string"),
    field("boolean", "v", "boolean"),
    field("any", "v", "any"),
    field("depth", "hypo.depth", "number"),
    field("station", "meta.station.id", "string", site=True),
    field("limited", "v", "number", [">=", "<"]),
    {"id": "mixed", "path": "v", "values": [{"type": "number", "operators": ["="]}, {"type": "string"}]},
    {"id": "untyped", "path": "v", "values": []},
]

# A well-formed value per operator and type, for tests about something else than the value.
SAMPLE: dict[tuple[str, str], Any] = {
    **{(op, "number"): 5 for op in ("=", "!=", ">", ">=", "<", "<=")},
    ("=", "string"): "a",
    ("!=", "string"): "a",
    ("=", "boolean"): True,
    ("!=", "boolean"): True,
    ("BETWEEN", "number"): [0, 10],
    ("IN", "number"): [1, 2],
    ("NOT IN", "number"): [1, 2],
    ("IN", "string"): ["a", "b"],
    ("NOT IN", "string"): ["a", "b"],
    **{(op, "string"): "a" for op in ("CONTAINS", "STARTS WITH", "ENDS WITH")},
}


def sample_value(op: str, ftype: str) -> Any:
    """A value the operator takes, of ``ftype`` when it can be, else of a type the operator lists."""
    if (op, ftype) in SAMPLE:
        return SAMPLE[op, ftype]
    return next(SAMPLE[op, t] for t in TYPES if (op, t) in SAMPLE)


def leaf(fid: str, op: str, *value: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"field": fid, "operator": op}
    if value:
        (node["value"],) = value
    return node


def sample_leaf(fid: str, op: str, ftype: str) -> dict[str, Any]:
    return leaf(fid, op) if op in NO_VALUE else leaf(fid, op, sample_value(op, ftype))


def run(filter: Any, data: Any) -> bool:
    compiled = compile_filter(filter, FIELDS)
    result, _ = compiled.evaluate(data)
    assert compiled.matches(data) is result
    return result


def paths(filter: Any) -> list[str]:
    return [path for path, _ in validate_filter(filter, FIELDS)]


# ---------------------------------------------------------------- every operator on its listed types

# (operator, field type, filter value, value in data, expected)
LISTED = [
    ("=", "number", 5, 5, True),
    ("=", "number", 5, 5.0, True),
    ("=", "number", 2.5, 2.5, True),
    ("=", "number", 5, 6, False),
    ("=", "string", "a", "a", True),
    ("=", "string", "a", "A", False),
    ("=", "boolean", True, True, True),
    ("=", "boolean", False, False, True),
    ("=", "boolean", True, False, False),
    ("!=", "number", 5, 6, True),
    ("!=", "number", 5, 5.0, False),
    ("!=", "string", "a", "b", True),
    ("!=", "string", "a", "a", False),
    ("!=", "boolean", True, False, True),
    ("!=", "boolean", True, True, False),
    (">", "number", 5, 6, True),
    (">", "number", 5, 5, False),
    (">=", "number", 5, 5, True),
    (">=", "number", 5, 4.9, False),
    ("<", "number", 5, 4, True),
    ("<", "number", 5, 5, False),
    ("<=", "number", 5, 5, True),
    ("<=", "number", 5, 5.1, False),
    ("<", "number", -1.5, -2, True),
    ("BETWEEN", "number", [0, 10], 0, True),
    ("BETWEEN", "number", [0, 10], 10, True),
    ("BETWEEN", "number", [0, 10], 5.5, True),
    ("BETWEEN", "number", [0, 10], 10.5, False),
    ("BETWEEN", "number", [0, 10], -1, False),
    ("BETWEEN", "number", [0.5, 0.5], 0.5, True),
    ("IN", "number", [1, 2], 2, True),
    ("IN", "number", [1, 2], 2.0, True),
    ("IN", "number", [1, 2], 3, False),
    ("IN", "string", ["a", "b"], "b", True),
    ("IN", "string", ["a", "b"], "B", False),
    ("NOT IN", "number", [1, 2], 3, True),
    ("NOT IN", "number", [1, 2], 1.0, False),
    ("NOT IN", "string", ["a"], "b", True),
    ("NOT IN", "string", ["a"], "a", False),
    ("CONTAINS", "string", "ok", "tokyo", True),
    ("CONTAINS", "string", "ok", "TOKYO", False),
    ("STARTS WITH", "string", "to", "tokyo", True),
    ("STARTS WITH", "string", "to", "Tokyo", False),
    ("ENDS WITH", "string", "yo", "tokyo", True),
    ("ENDS WITH", "string", "yo", "tokYO", False),
]


@pytest.mark.parametrize(("op", "ftype", "value", "actual", "expected"), LISTED)
def test_operator_on_a_listed_type(op: str, ftype: str, value: Any, actual: Any, expected: bool) -> None:
    filter = leaf(ftype, op, value)
    assert validate_filter(filter, FIELDS) == []
    assert run(filter, {"v": actual}) is expected


def test_the_table_rows_cover_every_operator_on_every_listed_value_type_both_ways() -> None:
    covered = {(op, ftype, expected) for op, ftype, _, _, expected in LISTED}
    wanted = {
        (op, t, e) for op, types in SPEC_TABLE.items() if op not in NO_VALUE for t in types for e in (True, False)
    }
    assert covered == wanted


# EXISTS / IS NULL / IS NOT NULL apply to every type: (operator, value in data or "absent", expected)
PRESENCE = [
    ("EXISTS", 1, True),
    ("EXISTS", None, True),
    ("EXISTS", "absent", False),
    ("IS NULL", None, True),
    ("IS NULL", 0, False),
    ("IS NULL", "absent", False),
    ("IS NOT NULL", 0, True),
    ("IS NOT NULL", None, False),
    ("IS NOT NULL", "absent", False),
]


@pytest.mark.parametrize("ftype", [*TYPES, "any"])
@pytest.mark.parametrize(("op", "actual", "expected"), PRESENCE)
def test_presence_operators_apply_to_every_type(op: str, actual: Any, expected: bool, ftype: str) -> None:
    filter = leaf(ftype, op)
    assert validate_filter(filter, FIELDS) == []
    assert run(filter, {} if actual == "absent" else {"v": actual}) is expected


# ---------------------------------------------------------------- types an operator does not list

REFUSED = [(op, t) for op, types in SPEC_TABLE.items() for t in TYPES if t not in types]
ACCEPTED = [(op, t) for op, types in SPEC_TABLE.items() for t in TYPES if t in types]


@pytest.mark.parametrize(("op", "ftype"), REFUSED)
def test_operator_on_a_type_it_does_not_list_is_refused(op: str, ftype: str) -> None:
    errors = validate_filter(sample_leaf(ftype, op, ftype), FIELDS)
    assert [path for path, _ in errors] == ["filter.operator"]
    assert "does not apply" in errors[0][1]


@pytest.mark.parametrize(("op", "ftype"), ACCEPTED)
def test_operator_on_a_type_it_lists_is_accepted(op: str, ftype: str) -> None:
    assert validate_filter(sample_leaf(ftype, op, ftype), FIELDS) == []


@pytest.mark.parametrize("op", sorted(SPEC_TABLE))
@pytest.mark.parametrize("fid", ["any", "untyped"])
def test_a_field_of_type_any_or_without_types_takes_every_operator(op: str, fid: str) -> None:
    assert validate_filter(sample_leaf(fid, op, "number"), FIELDS) == []


# ---------------------------------------------------------------- absent versus null

ALL_LEAVES = [sample_leaf("any", op, "number") for op in SPEC_TABLE] + [
    sample_leaf("any", op, "string") for op in ("=", "!=", "IN", "NOT IN", "CONTAINS", "STARTS WITH", "ENDS WITH")
]
ON_NULL = {"EXISTS": True, "IS NULL": True}


@pytest.mark.parametrize("filter", ALL_LEAVES, ids=lambda f: f"{f['operator']} {f.get('value')}")
@pytest.mark.parametrize("data", [{}, {"w": 1}, [], "v", None], ids=["empty", "other-key", "list", "string", "null"])
def test_every_operator_on_an_absent_value_is_false(filter: dict[str, Any], data: Any) -> None:
    assert run(filter, data) is False


@pytest.mark.parametrize("filter", ALL_LEAVES, ids=lambda f: f"{f['operator']} {f.get('value')}")
def test_only_exists_and_is_null_are_true_on_null(filter: dict[str, Any]) -> None:
    assert run(filter, {"v": None}) is ON_NULL.get(filter["operator"], False)


# ---------------------------------------------------------------- nested paths

# (data, EXISTS, IS NULL, "= 5")
NESTED = [
    ({"hypo": {"depth": 5}}, True, False, True),
    ({"hypo": {"depth": 5.0, "other": 1}}, True, False, True),
    ({"hypo": {"depth": None}}, True, True, False),
    ({"hypo": {}}, False, False, False),
    ({"hypo": None}, False, False, False),
    ({"hypo": 5}, False, False, False),
    ({"hypo": [{"depth": 5}]}, False, False, False),
    ({"hypo.depth": 5}, False, False, False),
    ({"depth": 5}, False, False, False),
    ({}, False, False, False),
]


@pytest.mark.parametrize(("data", "exists", "is_null", "equals"), NESTED)
def test_nested_path_is_read_key_by_key_and_a_non_object_on_the_way_is_absent(
    data: dict[str, Any], exists: bool, is_null: bool, equals: bool
) -> None:
    assert run(leaf("depth", "EXISTS"), data) is exists
    assert run(leaf("depth", "IS NULL"), data) is is_null
    assert run(leaf("depth", "=", 5), data) is equals


# ---------------------------------------------------------------- types never mix

# (field, operator, filter value, value in data): all false, none raises
MIXED = [
    ("any", "=", 1, True),
    ("any", "=", True, 1),
    ("any", "=", 0, False),
    ("any", "=", False, 0),
    ("any", "=", "1", 1),
    ("any", "=", 1, "1"),
    ("any", "=", "a", ["a"]),
    ("any", "=", 1, {"v": 1}),
    ("any", "!=", 1, True),
    ("any", "!=", True, 1),
    ("any", "!=", "1", 2),
    ("any", "!=", 1, [2]),
    ("number", ">", 1, "2"),
    ("number", ">", 0, True),
    ("number", "<=", 1, [0]),
    ("number", "BETWEEN", [0, 2], True),
    ("number", "BETWEEN", [0, 2], "1"),
    ("any", "IN", [1], True),
    ("any", "IN", [1], "1"),
    ("any", "IN", ["1"], 1),
    ("any", "IN", ["a"], ["a"]),
    ("any", "NOT IN", [1], "x"),
    ("any", "NOT IN", [1], True),
    ("any", "NOT IN", ["a"], 2),
    ("any", "NOT IN", ["a"], {"a": 1}),
    ("string", "CONTAINS", "a", ["a"]),
    ("string", "STARTS WITH", "1", 12),
    ("string", "ENDS WITH", "e", True),
]


@pytest.mark.parametrize(("fid", "op", "value", "actual"), MIXED)
def test_values_of_different_types_compare_false(fid: str, op: str, value: Any, actual: Any) -> None:
    filter = leaf(fid, op, value)
    assert validate_filter(filter, FIELDS) == []
    assert run(filter, {"v": actual}) is False


@pytest.mark.parametrize(("actual", "expected"), [("b", True), (3, True), ("a", False), (1, False), (True, False)])
def test_not_in_a_mixed_list_compares_each_value_with_the_values_of_its_type(actual: Any, expected: bool) -> None:
    assert run(leaf("any", "NOT IN", ["a", 1]), {"v": actual}) is expected


# ---------------------------------------------------------------- all / any / not

T = leaf("number", "=", 1)  # true on {"v": 1}
F = leaf("number", "=", 2)  # false on {"v": 1}

COMBOS = [
    ({"all": [T]}, True),
    ({"all": [T, T]}, True),
    ({"all": [T, F]}, False),
    ({"all": [F, T]}, False),
    ({"any": [F]}, False),
    ({"any": [F, T]}, True),
    ({"any": [F, F]}, False),
    ({"not": T}, False),
    ({"not": F}, True),
    ({"not": {"not": T}}, True),
    ({"all": [T, {"any": [F, {"not": F}]}]}, True),
    ({"all": [T, {"any": [F, {"not": T}]}]}, False),
    ({"any": [{"all": [T, F]}, {"all": [T, T]}]}, True),
    ({"not": {"any": [F, F]}}, True),
]


@pytest.mark.parametrize(("filter", "expected"), COMBOS)
def test_all_any_not_combine_their_conditions(filter: dict[str, Any], expected: bool) -> None:
    assert validate_filter(filter, FIELDS) == []
    assert run(filter, {"v": 1}) is expected


@pytest.mark.parametrize("data", [{}, {"v": None}, {"v": "1"}, {"v": True}], ids=["absent", "null", "string", "true"])
def test_not_equal_is_false_on_other_types_absent_and_null_unlike_not_of_equal(data: dict[str, Any]) -> None:
    assert run(leaf("any", "!=", 1), data) is False
    assert run({"not": leaf("any", "=", 1)}, data) is True


def test_null_filter_always_matches_with_no_clauses() -> None:
    assert validate_filter(None, FIELDS) == []
    compiled = compile_filter(None, [])
    assert compiled.evaluate({"anything": 1}) == (True, [])
    assert compiled.matches({}) is True


# ---------------------------------------------------------------- trace clauses


def test_clauses_list_every_condition_in_filter_order_without_short_circuit() -> None:
    filter = {
        "all": [
            leaf("number", ">=", 5),
            {"any": [leaf("string", "IN", ["kanto"]), {"not": leaf("depth", "BETWEEN", [0, 10])}]},
            leaf("depth", "EXISTS"),
            leaf("any", "IS NULL"),
        ]
    }
    result, clauses = compile_filter(filter, FIELDS).evaluate({"v": 3})
    assert result is False
    assert clauses == [
        {"field": "number", "path": "v", "operator": ">=", "value": 5, "actual": 3, "result": False},
        {"field": "string", "path": "v", "operator": "IN", "value": ["kanto"], "actual": 3, "result": False},
        {"field": "depth", "path": "hypo.depth", "operator": "BETWEEN", "value": [0, 10], "result": False},
        {"field": "depth", "path": "hypo.depth", "operator": "EXISTS", "result": False},
        {"field": "any", "path": "v", "operator": "IS NULL", "actual": 3, "result": False},
    ]
    assert list(clauses[0]) == ["field", "path", "operator", "value", "actual", "result"]


def test_a_clause_keeps_null_as_actual_and_leaves_actual_out_when_absent() -> None:
    compiled = compile_filter(leaf("depth", "IS NULL"), FIELDS)
    assert compiled.evaluate({"hypo": {"depth": None}})[1][0]["actual"] is None
    assert "actual" not in compiled.evaluate({"hypo": {}})[1][0]


def test_clause_result_is_the_condition_not_the_negation_above_it() -> None:
    result, clauses = compile_filter({"not": leaf("number", "=", 1)}, FIELDS).evaluate({"v": 1})
    assert result is False
    assert [c["result"] for c in clauses] == [True]


def test_the_same_field_twice_gives_two_clauses() -> None:
    _, clauses = compile_filter({"any": [leaf("number", ">", 0), leaf("number", "<", 0)]}, FIELDS).evaluate({"v": 1})
    assert [(c["operator"], c["result"]) for c in clauses] == [(">", True), ("<", False)]


# ---------------------------------------------------------------- malformed filters

DEEP_OK: Any = leaf("number", "=", 1)
for _ in range(MAX_DEPTH - 1):
    DEEP_OK = {"not": DEEP_OK}
TOO_DEEP = {"not": DEEP_OK}

MALFORMED = [
    ("root list", [T], "filter"),
    ("root string", "v = 1", "filter"),
    ("empty object", {}, "filter"),
    ("only unknown keys", {"where": 1}, "filter"),
    ("unknown field", leaf("nope", "=", 1), "filter.field"),
    ("field not a string", {"field": 5, "operator": "=", "value": 1}, "filter.field"),
    ("field missing", {"operator": "=", "value": 1}, "filter.field"),
    ("operator missing", {"field": "number", "value": 1}, "filter.operator"),
    ("unknown operator", leaf("number", "~", 1), "filter.operator"),
    ("lower-case operator", leaf("number", "between", [0, 1]), "filter.operator"),
    ("operator not a string", leaf("number", ["="], 1), "filter.operator"),
    ("not allowed by the field", leaf("limited", ">", 1), "filter.operator"),
    ("not allowed by the field, nested", {"any": [T, leaf("limited", "=", 1)]}, "filter.any.1.operator"),
    ("extra key in a condition", {**T, "note": "x"}, "filter.note"),
    ("extra key next to all", {"all": [T], "note": "x"}, "filter.note"),
    ("two combinators", {"all": [T], "any": [T]}, "filter"),
    ("combinator and condition", {"all": [T], "field": "number"}, "filter"),
    ("empty all", {"all": []}, "filter.all"),
    ("empty any", {"any": []}, "filter.any"),
    ("all not a list", {"all": T}, "filter.all"),
    ("not of a list", {"not": [T]}, "filter.not"),
    ("not of null", {"not": None}, "filter.not"),
    ("non-object element", {"all": [T, 5]}, "filter.all.1"),
    ("too deep", TOO_DEEP, "filter" + ".not" * MAX_DEPTH),
    ("too many in one list", {"all": [T] * (MAX_LEAVES + 1)}, "filter.all"),
    ("too many in all", {"all": [{"any": [T] * 51}, {"any": [T] * 50}]}, "filter"),
    ("nested value path", {"all": [T, {"any": [leaf("number", "BETWEEN", [1])]}]}, "filter.all.1.any.0.value"),
    ("= without value", leaf("number", "="), "filter.value"),
    ("= null", leaf("number", "=", None), "filter.value"),
    ("= string on number", leaf("number", "=", "5"), "filter.value"),
    ("= number on boolean", leaf("boolean", "=", 1), "filter.value"),
    ("= true on number", leaf("number", "=", True), "filter.value"),
    ("= list", leaf("any", "=", [1]), "filter.value"),
    ("= object", leaf("any", "=", {"a": 1}), "filter.value"),
    ("= long string", leaf("string", "=", "x" * (MAX_STRING_CHARS + 1)), "filter.value"),
    ("!= number on string", leaf("string", "!=", 5), "filter.value"),
    ("> true", leaf("number", ">", True), "filter.value"),
    ("> string", leaf("number", ">", "5"), "filter.value"),
    ("> nan", leaf("number", ">", math.nan), "filter.value"),
    ("< inf", leaf("number", "<", math.inf), "filter.value"),
    (">= without value", leaf("number", ">="), "filter.value"),
    ("BETWEEN scalar", leaf("number", "BETWEEN", 5), "filter.value"),
    ("BETWEEN one bound", leaf("number", "BETWEEN", [1]), "filter.value"),
    ("BETWEEN three bounds", leaf("number", "BETWEEN", [1, 2, 3]), "filter.value"),
    ("BETWEEN lo > hi", leaf("number", "BETWEEN", [2, 1]), "filter.value"),
    ("BETWEEN string bound", leaf("number", "BETWEEN", [1, "2"]), "filter.value.1"),
    ("BETWEEN true bound", leaf("number", "BETWEEN", [True, 2]), "filter.value.0"),
    ("BETWEEN nan bound", leaf("number", "BETWEEN", [0, math.nan]), "filter.value.1"),
    ("BETWEEN -inf bound", leaf("number", "BETWEEN", [-math.inf, 0]), "filter.value.0"),
    ("IN scalar", leaf("number", "IN", 1), "filter.value"),
    ("IN empty", leaf("number", "IN", []), "filter.value"),
    ("IN too long", leaf("number", "IN", list(range(MAX_LIST_VALUES + 1))), "filter.value"),
    ("IN string on number", leaf("number", "IN", [1, "a"]), "filter.value.1"),
    ("IN number on string", leaf("string", "IN", ["a", 1]), "filter.value.1"),
    ("IN true", leaf("any", "IN", [True]), "filter.value.0"),
    ("IN null", leaf("any", "IN", [None]), "filter.value.0"),
    ("IN list", leaf("any", "IN", [[1]]), "filter.value.0"),
    ("NOT IN nan", leaf("number", "NOT IN", [math.nan]), "filter.value.0"),
    ("NOT IN empty", leaf("string", "NOT IN", []), "filter.value"),
    ("CONTAINS number", leaf("string", "CONTAINS", 5), "filter.value"),
    ("STARTS WITH list", leaf("string", "STARTS WITH", ["a"]), "filter.value"),
    ("ENDS WITH without value", leaf("string", "ENDS WITH"), "filter.value"),
    ("EXISTS with value", leaf("number", "EXISTS", 1), "filter.value"),
    ("IS NULL with null value", leaf("number", "IS NULL", None), "filter.value"),
    ("IS NOT NULL with value", leaf("any", "IS NOT NULL", True), "filter.value"),
    ("mixed field: = true, its entries are number and string", leaf("mixed", "=", True), "filter.value"),
    ("mixed field: > listed by no entry", leaf("mixed", ">", 1), "filter.operator"),
]


@pytest.mark.parametrize(("filter", "path"), [pytest.param(f, p, id=name) for name, f, p in MALFORMED])
def test_malformed_filter_is_refused_at_its_json_path(filter: Any, path: str) -> None:
    assert paths(filter) == [path]
    with pytest.raises(InvalidFilter) as refused:
        compile_filter(filter, FIELDS)
    assert [p for p, _ in refused.value.errors] == [path]


ACCEPTED_SHAPES = [
    pytest.param(DEEP_OK, id="nested as deep as allowed"),
    pytest.param({"all": [T] * MAX_LEAVES}, id="as many conditions as allowed"),
    pytest.param(leaf("number", "IN", list(range(MAX_LIST_VALUES))), id="IN as long as allowed"),
    pytest.param(leaf("string", "=", "x" * MAX_STRING_CHARS), id="string as long as allowed"),
    pytest.param(leaf("number", "BETWEEN", [1.5, 1.5]), id="BETWEEN lo == hi"),
    pytest.param(leaf("number", "BETWEEN", [-1, 2.5]), id="BETWEEN int and float"),
    pytest.param(leaf("any", "IN", ["a", 1]), id="IN mixed on any"),
    pytest.param(leaf("limited", "<", 3), id="operator the field lists"),
    pytest.param(leaf("mixed", "=", 1), id="mixed field: = on its number entry"),
    pytest.param(leaf("mixed", "=", "a"), id="mixed field: = on its string entry"),
    pytest.param(leaf("mixed", "CONTAINS", "a"), id="mixed field: string entry lists every string operator"),
    pytest.param(leaf("untyped", "=", True), id="field without values entries"),
]


@pytest.mark.parametrize("filter", ACCEPTED_SHAPES)
def test_well_formed_filter_is_accepted(filter: Any) -> None:
    assert validate_filter(filter, FIELDS) == []


def test_every_problem_is_reported_not_only_the_first() -> None:
    filter = {"all": [leaf("nope", "=", 1), leaf("number", "~", 1), {"any": []}, leaf("number", ">", "x")]}
    assert paths(filter) == ["filter.all.0.field", "filter.all.1.operator", "filter.all.2.any", "filter.all.3.value"]


def test_a_huge_tree_is_cut_short() -> None:
    wide: Any = {"all": [{"all": []}] * MAX_LEAVES}
    for _ in range(3):
        wide = {"all": [wide] * MAX_LEAVES}
    errors = validate_filter(wide, FIELDS)
    assert errors[-1] == ("filter", "more than 1000 nodes")
    assert len(errors) < 1100


# ---------------------------------------------------------------- sites

SITE_CASES = [
    (None, {"meta": {"station": {"id": "s1"}}}, True, {"sites": None}),
    ([], {}, True, {"sites": None}),
    (
        ["s1", "s2"],
        {"meta": {"station": {"id": "s2"}}},
        True,
        {"site_field": "station", "value": "s2", "sites": ["s1", "s2"], "result": True},
    ),
    (
        ["s1"],
        {"meta": {"station": {"id": "S1"}}},
        False,
        {"site_field": "station", "value": "S1", "sites": ["s1"], "result": False},
    ),
    (
        ["1"],
        {"meta": {"station": {"id": 1}}},
        False,
        {"site_field": "station", "value": 1, "sites": ["1"], "result": False},
    ),
    (
        ["s1"],
        {"meta": {"station": {"id": None}}},
        False,
        {"site_field": "station", "value": None, "sites": ["s1"], "result": False},
    ),
    (["s1"], {"meta": {"station": "s1"}}, False, {"site_field": "station", "sites": ["s1"], "result": False}),
    (["s1"], {}, False, {"site_field": "station", "sites": ["s1"], "result": False}),
]


@pytest.mark.parametrize(("sites", "data", "expected", "detail"), SITE_CASES)
def test_site_matches_the_value_at_the_topic_site_field(
    sites: list[str] | None, data: dict[str, Any], expected: bool, detail: dict[str, Any]
) -> None:
    assert site_matches(sites, FIELDS, data) == (expected, detail)


def test_sites_on_a_topic_without_a_site_field_never_match() -> None:
    fields = [f for f in FIELDS if not f.get("site")]
    matched, detail = site_matches(["s1"], fields, {"meta": {"station": {"id": "s1"}}})
    assert matched is False
    assert detail["result"] is False and detail["site_field"] is None and detail["reason"]


# ---------------------------------------------------------------- properties

JSON_SCALARS = st.none() | st.booleans() | st.integers(-10, 10) | st.floats(-10, 10) | st.sampled_from(["a", "b", "ab"])
JSON = st.recursive(
    JSON_SCALARS | st.floats() | st.text(max_size=5) | st.integers(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=10,
)
# Data shaped like the fields' paths, so that conditions hit values of every type, null and absent.
DATA = st.fixed_dictionaries(
    {},
    optional={
        "v": JSON_SCALARS | JSON,
        "hypo": st.fixed_dictionaries({}, optional={"depth": JSON_SCALARS}) | JSON,
        "meta": JSON,
    },
)

LEAF_SCALAR = {
    "number": st.integers(-10, 10) | st.floats(-10, 10),
    "string": st.sampled_from(["a", "b", "ab", ""]),
    "boolean": st.booleans(),
}


@st.composite
def valid_leaf(draw: st.DrawFn) -> dict[str, Any]:
    fid, ftype = draw(
        st.sampled_from(
            [("number", "number"), ("string", "string"), ("boolean", "boolean"), ("depth", "number"), ("any", "any")]
        )
    )
    op = draw(st.sampled_from([op for op, types in SPEC_TABLE.items() if ftype in types or ftype == "any"]))
    kinds = sorted(SPEC_TABLE[op] & set(TYPES)) if ftype == "any" else [ftype]
    if op in NO_VALUE:
        return leaf(fid, op)
    if op == "BETWEEN":
        lo, hi = sorted(draw(st.lists(LEAF_SCALAR["number"], min_size=2, max_size=2)))
        return leaf(fid, op, [lo, hi])
    scalar = st.one_of([LEAF_SCALAR[k] for k in kinds])
    if op in ("IN", "NOT IN"):
        return leaf(fid, op, draw(st.lists(scalar, min_size=1, max_size=4)))
    return leaf(fid, op, draw(scalar))


FILTERS = st.recursive(
    valid_leaf(),
    lambda children: (
        st.builds(lambda c: {"all": c}, st.lists(children, min_size=1, max_size=3))
        | st.builds(lambda c: {"any": c}, st.lists(children, min_size=1, max_size=3))
        | st.builds(lambda c: {"not": c}, children)
    ),
    max_leaves=8,
)


def combine(node: dict[str, Any], results: list[bool]) -> bool:
    """The filter's result from its clause results, consumed in filter order."""
    if "all" in node:
        return all([combine(child, results) for child in node["all"]])
    if "any" in node:
        return any([combine(child, results) for child in node["any"]])
    if "not" in node:
        return not combine(node["not"], results)
    return results.pop(0)


def count_leaves(node: dict[str, Any]) -> int:
    if "not" in node:
        return count_leaves(node["not"])
    children = node.get("all") or node.get("any")
    return sum(count_leaves(c) for c in children) if children else 1


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(filter=FILTERS, data=DATA | JSON)
def test_matches_agrees_with_evaluate_which_follows_its_clauses(filter: dict[str, Any], data: Any) -> None:
    assert validate_filter(filter, FIELDS) == []
    compiled = compile_filter(filter, FIELDS)
    result, clauses = compiled.evaluate(data)
    assert compiled.matches(data) is result
    assert len(clauses) == count_leaves(filter)
    assert combine(filter, [c["result"] for c in clauses]) is result


@PROPERTY
@given(filter=st.sampled_from(ALL_LEAVES) | FILTERS, data=JSON, wrap=st.booleans())
def test_evaluate_and_site_matches_never_raise_on_arbitrary_json(filter: dict[str, Any], data: Any, wrap: bool) -> None:
    data = {"v": data} if wrap else data
    compiled = compile_filter(filter, FIELDS)
    assert compiled.evaluate(data)[0] is compiled.matches(data)
    assert site_matches(["a"], FIELDS, data)[0] in (True, False)


@PROPERTY
@given(filter=JSON)
def test_validate_never_raises_on_arbitrary_json(filter: Any) -> None:
    errors = validate_filter(filter, FIELDS)
    assert all(isinstance(p, str) and p.startswith("filter") and isinstance(m, str) for p, m in errors)


def test_a_fields_change_breaks_a_workflow_only_when_it_worked_before() -> None:
    """Issue 14, defect 10: the topic PATCH refuses a change that would disable a workflow."""
    level = {"id": "level", "path": "level", "values": [{"type": "number"}]}
    site = {"id": "site", "path": "site", "site": True}
    on_level = {"field": "level", "operator": ">=", "value": 10}
    assert broken_by_fields_change(on_level, None, [level], [level, site]) == []
    assert [p for p, _ in broken_by_fields_change(on_level, None, [level], [site])] == ["filter.field"]
    retyped = [{**level, "values": [{"type": "string"}]}]
    assert [p for p, _ in broken_by_fields_change(on_level, None, [level], retyped)] == ["filter.operator"]
    assert [p for p, _ in broken_by_fields_change(None, ["tokyo"], [level, site], [level])] == ["sites"]
    assert broken_by_fields_change(None, None, [level], []) == []  # no filter, no sites: nothing to break
    assert broken_by_fields_change(on_level, None, [site], []) == []  # it did not fit before either
