"""``tocsin events show`` for people (issue 39, item D): a trace the worker really builds
(app/domain/pipeline.py, shaped as ``GET …/events/{id}`` answers it) printed with RFC 3339 times
and one line per workflow considered; and what a 404 means: "no such event" for an id that is not
an event id, "no trace yet" for one that is (``--wait`` asks again until it comes)."""

from __future__ import annotations

import io
import re
from typing import Any

import httpx
import pytest

from app.domain.pipeline import process
from app.domain.shared.ids import new_id
from app.domain.workflows.topic_config import TopicConfig, WorkflowConfig, compiled_filter
from cli.events import cmd_events_show, is_event_id, readable, render, rfc3339
from cli.profile import Target

TARGET = Target("http://tocsin.test", "tcs_token", "org_1")
ACCEPTED_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z

FIELDS = [
    {"id": "magnitude", "path": "magnitude", "values": [{"type": "number", "operators": [">=", "BETWEEN"]}]},
    {"id": "region", "path": "place.region", "values": [{"type": "string", "operators": ["IN", "EXISTS"]}]},
]
FILTER = {
    "all": [
        {"field": "magnitude", "operator": ">=", "value": 5},
        {
            "any": [
                {"field": "region", "operator": "IN", "value": ["tohoku"]},
                {"field": "region", "operator": "EXISTS"},
            ]
        },
    ]
}
BOOK = {"id": "obk_1", "title": "Quake: {event.name}", "member_user_ids": [], "member_group_ids": []}
METRIC = {
    "type": "METRIC",
    "rules": [{"metric_name": "level", "mode": "ABSOLUTE", "threshold": 10}],
    "peak_hold_duration": 30,
    "exit_stable_limit": 3,
    "auto_resolve_duration": 120,
}


def _workflow(wf_id: str, mode: str, filter: dict[str, Any] | None) -> WorkflowConfig:
    compiled, _error = compiled_filter(filter, FIELDS)
    actions = [{"type": "RUN_OPERATION_BOOK", "operation_book_id": "obk_1"}]
    return WorkflowConfig(wf_id, wf_id, mode, filter, None, actions, compiled=compiled)


def api_trace(data: dict[str, Any], level: float) -> dict[str, Any]:
    """The trace of one METRIC event through three workflows, as the API answers it."""
    workflows = (
        _workflow("wfl_quake", "ACTUAL", FILTER),
        _workflow("wfl_big", "ACTUAL", {"field": "magnitude", "operator": "BETWEEN", "value": [7, 10]}),
        _workflow("wfl_drill", "DRILL", None),
    )
    cfg = TopicConfig("org_1", "wtp_1", "quake", {"fields": FIELDS, "control_policy_profile": METRIC}, workflows)
    cfg.books["obk_1"] = BOOK
    record = {
        "id": "evt_1",
        "organization_id": "org_1",
        "topic_id": "wtp_1",
        "status": "ACTUAL",
        "accepted_ms": ACCEPTED_MS,
        "data": data,
        "event": {"id": "jma-1", "name": "M6.1"},
        "event_control": {"partition_key": "miyagi", "metrics": {"level": level}},
    }
    (decided, outputs), *_ = process(record, None, cfg, key="k", offset=0).decided
    assert decided["decision"] == "NOTIFY"
    steps = [{"step": s["step"], **s["detail"]} for s in outputs.trace["steps"]]
    return {"id": "evt_1", "organization_id": "org_1", "accepted_at": "2026-01-01T00:00:00+00:00", "steps": steps}


def test_times_are_rfc3339_and_durations_stay_numbers() -> None:
    assert rfc3339(ACCEPTED_MS) == "2026-01-01T00:00:00.000Z"
    assert rfc3339(ACCEPTED_MS + 1_234) == "2026-01-01T00:00:01.234Z"
    given = {"stages": {"accepted_ms": ACCEPTED_MS, "delivered_ms": None}, "duration_ms": 3, "peak": [{"at_ms": 0}]}
    assert readable(given) == {
        "stages": {"accepted": "2026-01-01T00:00:00.000Z", "delivered_ms": None},
        "duration_ms": 3,
        "peak": [{"at": "1970-01-01T00:00:00.000Z"}],
    }


def test_a_trace_reads_top_down_one_line_per_workflow() -> None:
    shown = render(api_trace({"magnitude": 6.1, "place": {"region": "tohoku"}}, 12), "evt_1")
    lines = shown.splitlines()
    assert lines[0] == "event evt_1 accepted at 2026-01-01T00:00:00.000Z"
    assert lines[1] == "  accepted: status=ACTUAL, partition_key=miyagi, publisher_event_id=jma-1, topic_id=wtp_1"
    assert lines[2] == "  control: policy=METRIC, decision=NOTIFY, reason=level=12 ≥ 10, new peak"
    assert lines[3] == "    before: policy_type=METRIC, episode_open=false, episode_seq=0, stable_count=0"
    assert lines[4].startswith("    after: policy_type=METRIC, episode_open=true, episode_seq=1, peak=")
    assert '"at":"2026-01-01T00:00:00.000Z","hold_until":"2026-01-01T00:30:00.000Z"' in lines[4]
    assert lines[4].endswith("last_decision=NOTIFY, auto_resolve_at=2026-01-01T02:00:00.000Z")
    assert lines[5] == "  workflows:"
    assert lines[6:] == [
        "    wfl_quake (ACTUAL): mode matches; filter passed: magnitude >= 5 (read 6.1): true, "
        'region IN ["tohoku"] (read "tohoku"): true, region EXISTS (read "tohoku"): true; '
        "actions: RUN_OPERATION_BOOK requested",
        "    wfl_big (ACTUAL): mode matches; filter failed: magnitude BETWEEN [7,10] (read 6.1): false; not run",
        "    wfl_drill (DRILL): mode does not match the event's status; not run",
    ]
    assert not re.search(r"\b1767\d{9}\b", shown), "no epoch milliseconds left"


def test_an_absent_value_and_a_workflow_that_passes_without_acting() -> None:
    lines = render(api_trace({"magnitude": 5, "region": "tohoku"}, 12), "evt_1").splitlines()
    assert lines[6] == (
        "    wfl_quake (ACTUAL): mode matches; filter failed: magnitude >= 5 (read 5): true, "
        'region IN ["tohoku"] (absent): false, region EXISTS (absent): false; not run'
    )
    trace = api_trace({"magnitude": 6, "place": {"region": "kanto"}}, 12)
    [workflows] = [s for s in trace["steps"] if s["step"] == "workflows"]
    workflows["workflows"][0]["actions"] = []  # as a SUPPRESS leaves it: every check passed, nothing to run
    assert (
        render(trace, "evt_1")
        .splitlines()[6]
        .endswith('region IN ["tohoku"] (read "kanto"): false, region EXISTS (read "kanto"): true; no action')
    )


def _show(event_id: str, answers: list[httpx.Response], **kw: Any) -> tuple[str, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def api(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[min(len(seen), len(answers)) - 1]

    out = io.StringIO()
    cmd_events_show(TARGET, event_id, out=out, transport=httpx.MockTransport(api), **kw)
    return out.getvalue(), seen


NOT_FOUND = httpx.Response(404, json={"code": "RES-001", "message": "no trace for this event yet", "details": {}})


@pytest.mark.parametrize("given", ["jma-2026-1", "evt_1", "evt_" + "u" * 26, "EVT_" + "0" * 26, "../incidents"])
def test_an_id_that_cannot_be_an_event_is_no_such_event(given: str) -> None:
    """Before: every 404 said "no trace for this event yet", even for an id no event can have (the
    publisher's own event.id, a typo), so the reader waited for nothing."""
    assert not is_event_id(given)
    with pytest.raises(SystemExit, match="no such event") as said:
        _show(given, [NOT_FOUND], wait=30)
    assert "not an event id" in str(said.value)


def test_a_well_formed_id_without_trace_is_no_trace_yet() -> None:
    event_id = new_id("evt")
    assert is_event_id(event_id) and is_event_id("evt_" + "0f" * 13)  # the worker's release records
    with pytest.raises(SystemExit, match=f"no trace for {event_id} yet") as said:
        _show(event_id, [NOT_FOUND])
    assert "no such event" not in str(said.value)


def test_wait_asks_again_until_the_trace_comes() -> None:
    now = [0.0]
    trace = api_trace({"magnitude": 6.1, "place": {"region": "tohoku"}}, 12)
    answers = [NOT_FOUND, NOT_FOUND, httpx.Response(200, json=trace)]
    shown, seen = _show(
        new_id("evt"), answers, wait=5, sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0]
    )
    assert len(seen) == 3 and shown.startswith("event evt_1 accepted at 2026-01-01T00:00:00.000Z\n")
    now[0] = 0.0
    with pytest.raises(SystemExit, match="no trace for"):
        _show(new_id("evt"), [NOT_FOUND], wait=2, sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])


def test_other_refusals_are_said_as_the_api_says_them() -> None:
    refused = httpx.Response(403, json={"code": "IAM-001", "message": "missing permission", "details": {}})
    with pytest.raises(SystemExit, match="refused: 403 IAM-001: missing permission"):
        _show(new_id("evt"), [refused])
