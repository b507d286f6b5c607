"""docs/concepts/filters.md against the code it describes (issue 39, item A): its operator table is
the operators' table (app/domain/workflows/filters/operators.py), each refusal it shows is what the
save-time check says, its fields and filter are valid, and the trace lines of its complete example
are what ``tocsin events show`` prints for those events."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from app.domain.pipeline import process
from app.domain.workflows.filters.operators import OPERATOR_TYPES
from app.domain.workflows.filters.validation import validate_filter
from app.domain.workflows.topic_config import TopicConfig, WorkflowConfig, compiled_filter
from cli.events import step_lines

PAGE = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "filters.md"
TEXT = PAGE.read_text(encoding="utf-8")


def section(title: str) -> str:
    start = TEXT.index(f"\n## {title}\n")
    end = TEXT.find("\n## ", start + 1)
    return TEXT[start : end if end > 0 else None]


def fenced(text: str, info: str) -> list[str]:
    """The contents of the fenced blocks of ``text`` opened with ```` ```info ```` (``""``: no info)."""
    blocks: list[str] = []
    kind: str | None = None  # the open block's info string; None outside a block
    lines: list[str] = []
    for line in text.splitlines():
        if kind is None and line.startswith("```"):
            kind, lines = line[3:].strip(), []
        elif kind is not None and line == "```":
            if kind == info:
                blocks.append("\n".join(lines))
            kind = None
        elif kind is not None:
            lines.append(line)
    return blocks


def page_topic() -> dict[str, Any]:
    topic: dict[str, Any] = json.loads(fenced(section("Fields: what a filter can read"), "json")[0])
    return topic


def page_filter() -> Any:
    return json.loads(fenced(section("The grammar"), "json")[0])


def test_the_operator_table_is_the_code_s() -> None:
    rows = re.findall(r"^\| (`[^|]+) \| ([a-z, ]+) \|", section("Operators"), flags=re.M)
    shown: dict[str, frozenset[str]] = {}
    for operators, types in rows:
        for operator in re.findall(r"`([^`]+)`", operators):
            shown[operator] = frozenset(t.strip() for t in types.split(","))
    assert shown == dict(OPERATOR_TYPES)  # the page's "any" is the code's ANY


def test_the_example_s_fields_and_filter_are_valid_and_the_shorthand_refused() -> None:
    fields = page_topic()["fields"]
    assert validate_filter(page_filter(), fields) == []
    assert validate_filter({"not": {"=": 5}}, fields) == [
        ("filter.not", "must be a condition {field, operator, value}, or all, any or not")
    ]


REFUSED = [
    {"field": "depht", "operator": "=", "value": 1},
    {"field": "magnitude", "operator": "CONTAINS", "value": "5"},
    {"field": "region", "operator": "EXISTS"},
    {"field": "magnitude", "operator": ">=", "value": "5"},
    {"field": "magnitude", "operator": "BETWEEN", "value": [7, 5]},
    {"not": {"=": 5}},
]


def test_each_refusal_shown_is_what_the_check_says() -> None:
    table = section("Checked when the workflow is saved")
    rows = [r for r in re.findall(r"^\| [^|]+ \| `([^`]+)` \| `([^`]+)` \|$", table, re.M) if r != ("field", "message")]
    said = [error for filter in REFUSED for error in validate_filter(filter, page_topic()["fields"])]
    assert sorted(rows) == sorted(said)


def _workflows_line(data: dict[str, Any]) -> list[str]:
    fields, filter = page_topic()["fields"], page_filter()
    compiled, _ = compiled_filter(filter, fields)
    actions = [{"type": "RUN_OPERATION_BOOK", "operation_book_id": "obk_1"}]
    workflow = WorkflowConfig("wfl_…", "Strong quake", "ACTUAL", filter, None, actions, compiled=compiled)
    book = {"id": "obk_1", "title": "Quake", "member_user_ids": [], "member_group_ids": []}
    cfg = TopicConfig("org_1", "wtp_1", "quakes", {"fields": fields}, (workflow,), {"obk_1": book})
    record: dict[str, Any] = {"id": "evt_1", "organization_id": "org_1", "topic_id": "wtp_1", "status": "ACTUAL"}
    record |= {"accepted_ms": 0, "data": data, "event": {}, "event_control": {}}
    ((_, outputs),) = process(record, None, cfg, key="k", offset=0).decided
    [step] = [{"step": s["step"], **s["detail"]} for s in outputs.trace["steps"] if s["step"] == "workflows"]
    return step_lines(step)


def test_the_complete_example_s_trace_lines_are_what_the_command_prints() -> None:
    example = section("A complete example")
    shown = fenced(example, "")[-1].splitlines()
    places = [json.loads(p) for p in re.findall(r"'(\{\"region\"[^']*)'", example)]
    assert len(places) == 3
    printed = [line for place in places for line in _workflows_line({"magnitude": 5.4, "place": place})]
    assert shown == printed
    trace_json = json.loads(fenced(section("The trace"), "json")[0])
    first = _workflows_line({"magnitude": 6.1, "place": {"region": "tohoku", "depth_km": 40}})
    assert fenced(section("The trace"), "")[0].splitlines() == first
    assert trace_json["workflows"][0]["filter"]["clauses"][2] == {
        "field": "depth",
        "path": "place.depth_km",
        "operator": "BETWEEN",
        "value": [0, 10],
        "actual": 40,
        "result": False,
    }
