"""The per-event pipeline, table-driven, without Faust or Kafka (STYLE.md, rule 10): publish
records and auto-resolve ticks go through ``process(record, stored state, topic config)`` —
event-control policy (BYPASS, METRIC ABSOLUTE/DELTA, SET, INACTIVE), mode (ACTUAL, DRILL,
TEST), sites, filter, actions — against the state each earlier record of the case left under
its own key (organization/topic/status/partition key), read back through the table codec as a
restarted worker reads it. Each row gives what every record decides and which workflows act on
each decision; a release (RESOLVE) must reach exactly the workflows of its episode's NOTIFYs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from app.domain.events.publish import state_key
from app.domain.pipeline import Processed, StoredControl, process, reads_state, tick_record
from app.domain.workflows.episodes import FoundIncident, plan_incident_actions
from app.domain.workflows.filters.compiled import compile_filter
from app.domain.workflows.topic_config import TopicConfig, WorkflowConfig
from tables.codecs import dump_control, load_control

FIELDS: list[dict[str, Any]] = [
    {"id": "level", "path": "level", "values": [{"type": "number"}]},
    {"id": "site", "path": "site", "values": [{"type": "string"}], "site": True},
]
BOOK = {"id": "obk_1", "title": "{event.name}", "member_user_ids": [], "member_group_ids": []}
INCIDENT = {"type": "RUN_OPERATION_BOOK", "operation_book_id": "obk_1"}
WEBHOOK = {"type": "SEND_WEBHOOK", "url": "https://receiver.example/hook"}
EMAIL = {"type": "SEND_EMAIL", "to": ["ops@example.com"], "subject": "{event.name}", "body": "{data.level}"}


def _workflow(
    wf_id: str,
    mode: str = "ACTUAL",
    flt: dict[str, Any] | None = None,
    sites: list[str] | None = None,
    actions: tuple[dict[str, Any], ...] = (INCIDENT,),
) -> WorkflowConfig:
    return WorkflowConfig(wf_id, wf_id, mode, flt, sites, list(actions), compile_filter(flt, FIELDS), None)


ALL = _workflow("wf_all", actions=(INCIDENT, WEBHOOK))  # no filter, no sites: every ACTUAL decision
HIGH = _workflow("wf_high", flt={"field": "level", "operator": ">=", "value": 10})
TOKYO = _workflow("wf_tokyo", sites=["tokyo"])
DRILL = _workflow("wf_drill", mode="DRILL")
TEST = _workflow("wf_test", mode="TEST", actions=(EMAIL,))
WORKFLOWS = (ALL, HIGH, TOKYO, DRILL, TEST)
BROKEN = WorkflowConfig("wf_broken", "broken", "ACTUAL", {"x": 1}, None, [INCIDENT], None, "the fields changed")

METRIC = {"type": "METRIC", "rules": [{"metric_name": "level", "threshold": 10}], "peak_hold_duration": 10}
METRIC_EXIT_2 = {**METRIC, "exit_stable_limit": 2}
METRIC_AUTO_1 = {**METRIC, "auto_resolve_duration": 1}
DELTA = {"type": "METRIC", "rules": [{"metric_name": "level", "mode": "DELTA", "threshold": 5}]}
SET = {"type": "SET", "auto_resolve_duration": 1}
INACTIVE = {**METRIC, "status": "INACTIVE"}
MINUTE = 60_000


@dataclass(frozen=True)
class In:
    """One input record of a row: an event (``level`` and/or ``areas``) or a tick."""

    at_ms: int
    level: float | None = None
    site: str = "tokyo"
    status: str = "ACTUAL"
    areas: tuple[str, ...] | None = None
    tick: bool = False
    partition_key: str = "st-1"
    profile: dict[str, Any] | None = None  # the topic's policy from this record on (None: as before)
    workflows: tuple[WorkflowConfig, ...] | None = None  # the topic's workflows from this record on
    redelivered: int | None = None  # the index of an earlier input this one redelivers (same offset)
    action: str | None = None  # event_control.action: trigger (None), resolve, acknowledge


def ev(at_ms: int, level: float | None = None, **kw: Any) -> In:
    return In(at_ms, level, **kw)


def tick(at_ms: int, **kw: Any) -> In:
    return In(at_ms, tick=True, **kw)


@dataclass(frozen=True)
class Row:
    name: str
    profile: dict[str, Any] | None
    inputs: tuple[In, ...]
    # Per input, one "DECISION: acting workflows" per decided record ("" when none acts).
    expected: tuple[tuple[str, ...], ...]
    # Per state key ("STATUS/partition key"): (episode open, the episode's workflows) at the end.
    final: dict[str, tuple[bool, tuple[str, ...] | None]] = field(default_factory=dict)


ROWS = [
    Row(
        "bypass: every event notifies, each workflow's filter and sites decide",
        None,
        (ev(0, 5, site="osaka"), ev(1, 12), ev(2, 3)),
        (("NOTIFY: wf_all",), ("NOTIFY: wf_all wf_high wf_tokyo",), ("NOTIFY: wf_all wf_tokyo",)),
    ),
    Row(
        "bypass: DRILL runs only exercise workflows, TEST only test workflows",
        None,
        (ev(0, 12, status="DRILL"), ev(1, 12, status="TEST")),
        (("NOTIFY: wf_drill",), ("NOTIFY: wf_test",)),
    ),
    Row(
        "an INACTIVE policy behaves as BYPASS",
        INACTIVE,
        (ev(0, 12), ev(1, 12)),
        (("NOTIFY: wf_all wf_high wf_tokyo",), ("NOTIFY: wf_all wf_high wf_tokyo",)),
    ),
    Row(
        "metric absolute: the peak notifies, an equal value within the hold is suppressed, a new peak notifies",
        METRIC,
        (ev(0, 12), ev(1, 12), ev(2, 9), ev(3, 15)),
        (("NOTIFY: wf_all wf_high wf_tokyo",), ("SUPPRESS: ",), ("SUPPRESS: ",), ("NOTIFY: wf_all wf_high wf_tokyo",)),
        {"ACTUAL/st-1": (True, ("wf_all", "wf_high", "wf_tokyo"))},
    ),
    Row(
        "metric absolute: below the threshold outside an episode is suppressed",
        METRIC,
        (ev(0, 3), ev(1, 9.99)),
        (("SUPPRESS: ",), ("SUPPRESS: ",)),
        {"ACTUAL/st-1": (False, ())},
    ),
    Row(
        "exit_stable_limit: the release reaches the episode's workflows past the filter and sites",
        METRIC_EXIT_2,
        (ev(0, 12), ev(1, 3, site="osaka"), ev(2, 2, site="osaka")),
        (("NOTIFY: wf_all wf_high wf_tokyo",), ("SUPPRESS: ",), ("RESOLVE: wf_all wf_high wf_tokyo",)),
        {"ACTUAL/st-1": (False, ())},
    ),
    Row(
        "a release reaches only the workflows that ran for the episode's NOTIFYs",
        METRIC_EXIT_2,
        (ev(0, 12, site="osaka"), ev(1, 3), ev(2, 2)),
        (("NOTIFY: wf_all wf_high",), ("SUPPRESS: ",), ("RESOLVE: wf_all wf_high",)),
    ),
    Row(
        "a later NOTIFY's workflows join the episode and its release reaches them too",
        METRIC_EXIT_2,
        (ev(0, 12, site="osaka"), ev(1, 14), ev(2, 3), ev(3, 2, site="osaka")),
        (
            ("NOTIFY: wf_all wf_high",),
            ("NOTIFY: wf_all wf_high wf_tokyo",),
            ("SUPPRESS: ",),
            ("RESOLVE: wf_all wf_high wf_tokyo",),
        ),
    ),
    Row(
        "a workflow removed during the episode is not released; one added is not either",
        METRIC_EXIT_2,
        (ev(0, 12), ev(1, 3, workflows=(ALL, _workflow("wf_new"))), ev(2, 2)),
        (("NOTIFY: wf_all wf_high wf_tokyo",), ("SUPPRESS: ",), ("RESOLVE: wf_all",)),
    ),
    Row(
        "auto-resolve ticks: nothing before the time, a RESOLVE at it, nothing after",
        METRIC_AUTO_1,
        (ev(0, 12), tick(MINUTE - 1), tick(MINUTE), tick(2 * MINUTE)),
        (("NOTIFY: wf_all wf_high wf_tokyo",), (), ("RESOLVE: wf_all wf_high wf_tokyo",), ()),
        {"ACTUAL/st-1": (False, ())},
    ),
    Row(
        "auto-resolve counts from the episode's last NOTIFY",
        METRIC_AUTO_1,
        (ev(0, 12), ev(30_000, 14), tick(MINUTE), tick(MINUTE + 30_000)),
        (
            ("NOTIFY: wf_all wf_high wf_tokyo",),
            ("NOTIFY: wf_all wf_high wf_tokyo",),
            (),
            ("RESOLVE: wf_all wf_high wf_tokyo",),
        ),
    ),
    Row(
        "an event that finds its auto-release due releases first, then is decided on a fresh episode",
        METRIC_AUTO_1,
        (ev(0, 12, site="osaka"), ev(2 * MINUTE, 13)),
        (("NOTIFY: wf_all wf_high",), ("RESOLVE: wf_all wf_high", "NOTIFY: wf_all wf_high wf_tokyo")),
        {"ACTUAL/st-1": (True, ("wf_all", "wf_high", "wf_tokyo"))},
    ),
    Row(
        "a tick of a state with no episode decides nothing",
        METRIC_AUTO_1,
        (ev(0, 3), tick(5 * MINUTE)),
        (("SUPPRESS: ",), ()),
    ),
    Row(
        "DRILL has its own state: an exercise neither opens nor suppresses a real episode",
        METRIC_EXIT_2,
        (ev(0, 20, status="DRILL"), ev(1, 12), ev(2, 1, status="DRILL"), ev(3, 1, status="DRILL"), ev(4, 12)),
        (
            ("NOTIFY: wf_drill",),
            ("NOTIFY: wf_all wf_high wf_tokyo",),
            ("SUPPRESS: ",),
            ("RESOLVE: wf_drill",),
            ("SUPPRESS: ",),
        ),
        {"ACTUAL/st-1": (True, ("wf_all", "wf_high", "wf_tokyo")), "DRILL/st-1": (False, ())},
    ),
    Row(
        "TEST ticks release the TEST episode only; the ACTUAL one stays open",
        METRIC_AUTO_1,
        (ev(0, 12, status="TEST"), ev(30_000, 12), tick(MINUTE, status="TEST"), tick(MINUTE, status="ACTUAL")),
        (("NOTIFY: wf_test",), ("NOTIFY: wf_all wf_high wf_tokyo",), ("RESOLVE: wf_test",), ()),
        {"ACTUAL/st-1": (True, ("wf_all", "wf_high", "wf_tokyo")), "TEST/st-1": (False, ())},
    ),
    Row(
        "partition keys are separate states",
        METRIC_EXIT_2,
        (ev(0, 12), ev(1, 12, partition_key="st-2"), ev(2, 1), ev(3, 1)),
        (
            ("NOTIFY: wf_all wf_high wf_tokyo",),
            ("NOTIFY: wf_all wf_high wf_tokyo",),
            ("SUPPRESS: ",),
            ("RESOLVE: wf_all wf_high wf_tokyo",),
        ),
        {"ACTUAL/st-1": (False, ()), "ACTUAL/st-2": (True, ("wf_all", "wf_high", "wf_tokyo"))},
    ),
    Row(
        "delta: the first value only records, a change of at least the threshold notifies as a single event",
        DELTA,
        (ev(0, 1), ev(1, 4), ev(2, 9), ev(3, 20)),
        (("SUPPRESS: ",), ("SUPPRESS: ",), ("NOTIFY: wf_all wf_tokyo",), ("NOTIFY: wf_all wf_high wf_tokyo",)),
        {"ACTUAL/st-1": (False, ())},
    ),
    Row(
        "set: a new area notifies, known ones are suppressed, the auto-release reaches the episode's workflows",
        SET,
        (ev(0, areas=("a",)), ev(1, areas=("a",)), ev(2, areas=("b", "a"), site="osaka"), tick(MINUTE + 2)),
        (("NOTIFY: wf_all wf_tokyo",), ("SUPPRESS: ",), ("NOTIFY: wf_all",), ("RESOLVE: wf_all wf_tokyo",)),
        {"ACTUAL/st-1": (False, ())},
    ),
    Row(
        "a policy type change ends the open episode first (RESOLVE), then the new type decides",
        METRIC,
        (ev(0, 12), ev(1, 12, areas=("a",), profile=SET)),
        (("NOTIFY: wf_all wf_high wf_tokyo",), ("RESOLVE: wf_all wf_high wf_tokyo", "NOTIFY: wf_all wf_high wf_tokyo")),
    ),
    Row(
        "a redelivered record (at or below the stored offset) decides nothing again",
        METRIC,
        (ev(0, 12), ev(1, 3), ev(0, 12, redelivered=0)),
        (("NOTIFY: wf_all wf_high wf_tokyo",), ("SUPPRESS: ",), ()),
    ),
    Row(
        "a filter that no longer fits the topic's fields runs no action",
        None,
        (
            ev(
                0,
                12,
                workflows=(ALL, WorkflowConfig("wf_broken", "b", "ACTUAL", {"x": 1}, None, [INCIDENT], None, "x")),
            ),
        ),
        (("NOTIFY: wf_all",),),
    ),
]


# The source's resolve and acknowledge (issue 33, item 1; API.md "Resolve and acknowledge from the source")
ROWS += [
    Row(
        "a source resolve ends the open METRIC episode; the release reaches its workflows; the next value opens anew",
        METRIC,
        (ev(0, 12, site="osaka"), ev(1, action="resolve"), ev(2, 12)),
        (("NOTIFY: wf_all wf_high",), ("RESOLVE: wf_all wf_high",), ("NOTIFY: wf_all wf_high wf_tokyo",)),
        {"ACTUAL/st-1": (True, ("wf_all", "wf_high", "wf_tokyo"))},
    ),
    Row(
        "a source resolve with no episode open changes nothing",
        METRIC,
        (ev(0, 3), ev(1, action="resolve"), ev(2, 4, action="acknowledge")),
        (("SUPPRESS: ",), ("SUPPRESS: ",), ("SUPPRESS: ",)),
        {"ACTUAL/st-1": (False, ())},
    ),
    Row(
        "a source acknowledge of the open episode reaches its workflows' incidents and keeps the episode",
        METRIC_EXIT_2,
        (ev(0, 12, site="osaka"), ev(1, action="acknowledge"), ev(2, 3), ev(3, 2)),
        (("NOTIFY: wf_all wf_high",), ("SUPPRESS: wf_all wf_high",), ("SUPPRESS: ",), ("RESOLVE: wf_all wf_high",)),
        {"ACTUAL/st-1": (False, ())},
    ),
    Row(
        "a source resolve ends a SET episode: its members are forgotten",
        SET,
        (ev(0, areas=("a",)), ev(1, action="resolve"), ev(2, areas=("a",))),
        (
            ("NOTIFY: wf_all wf_tokyo",),
            ("RESOLVE: wf_all wf_tokyo",),
            ("NOTIFY: wf_all wf_tokyo",),
        ),
    ),
    Row(
        "bypass: a resolve and an acknowledge go to the workflows the filter and sites pass",
        None,
        (ev(0, 12), ev(1, 12, action="acknowledge"), ev(2, 5, action="resolve")),
        (("NOTIFY: wf_all wf_high wf_tokyo",), ("SUPPRESS: wf_all wf_high wf_tokyo",), ("RESOLVE: wf_all wf_tokyo",)),
    ),
]


def test_an_acknowledge_only_changes_incidents() -> None:
    """The source's acknowledge sends no push, e-mail or webhook; its incident actions say ACKNOWLEDGE
    and carry the episode's key, and the trace says why."""
    _, _, results = run_row(Row("ack", METRIC, (ev(0, 12), ev(1, action="acknowledge")), ((), ())))
    (decided, outputs) = results[1].decided[0]
    assert decided["decision"] == "SUPPRESS" and decided["control"]["reason"] == "acknowledged by the source"
    assert outputs.deliveries == []
    assert {a["decision"] for a in outputs.actions} == {"ACKNOWLEDGE"}
    assert {a["episode_key"] for a in outputs.actions} == {results[0].decided[0][0]["episode_key"]}
    (workflows,) = [step["detail"]["workflows"] for step in outputs.trace["steps"] if step["step"] == "workflows"]
    steps = [a["outcome"] for w in workflows for a in w["actions"]]
    assert "not sent: an acknowledge only changes the incident" in steps


def _topic(profile: dict[str, Any] | None, workflows: tuple[WorkflowConfig, ...]) -> TopicConfig:
    spec: dict[str, Any] = {"fields": FIELDS, "control_policy_profile": profile}
    return TopicConfig("org_1", "wtp_1", "river", spec, workflows, {"obk_1": BOOK})


def _record(item: In, index: int) -> tuple[str, dict[str, Any]]:
    key = state_key("org_1", "wtp_1", item.status, item.partition_key)
    if item.tick:
        return key, tick_record(key, item.at_ms, f"evt_tick{index}")
    event_control: dict[str, Any] = {"partition_key": item.partition_key}
    if item.level is not None:
        event_control["metrics"] = {"level": item.level}
    if item.areas is not None:
        event_control["areas"] = list(item.areas)
    if item.action is not None:
        event_control["action"] = item.action
    data = {"site": item.site, **({"level": item.level} if item.level is not None else {})}
    record = {
        "id": f"evt_{index}",
        "organization_id": "org_1",
        "topic_id": "wtp_1",
        "status": item.status,
        "accepted_ms": item.at_ms,
        "event": {"name": "river level", "id": f"pub_{index}"},
        "data": data,
        "event_control": event_control,
    }
    return key, record


def _acting(decided: dict[str, Any], outputs: Any) -> str:
    acting = {a["workflow_id"] for a in outputs.actions} | {d["workflow_id"] for _, d in outputs.deliveries}
    return f"{decided['decision']}: {' '.join(sorted(acting))}"


def run_row(row: Row) -> tuple[list[tuple[str, ...]], dict[str, StoredControl], list[Processed]]:
    """The row's inputs in order, as the control agent applies them: each key's state stored
    after each record (through the codec), offsets counting per partition (one here)."""
    states: dict[str, StoredControl] = {}
    profile, workflows = row.profile, WORKFLOWS
    got: list[tuple[str, ...]] = []
    results: list[Processed] = []
    for index, item in enumerate(row.inputs):
        profile = item.profile if item.profile is not None else profile
        workflows = item.workflows if item.workflows is not None else workflows
        cfg = _topic(profile, workflows)
        key, record = _record(item, index if item.redelivered is None else item.redelivered)
        offset = index if item.redelivered is None else item.redelivered
        stored = states.get(key) if reads_state(cfg, record) else None
        result = process(record, stored, cfg, key=key, offset=offset)
        if result.stored is not None:
            loaded = load_control(dump_control(result.stored))
            assert loaded == result.stored  # the stored bytes' format holds every field
            states[key] = loaded
        got.append(tuple(_acting(rec, outputs) for rec, outputs in result.decided))
        results.append(result)
    return got, states, results


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_pipeline_table(row: Row) -> None:
    assert len(row.expected) == len(row.inputs), "one expectation per input"
    got, states, _ = run_row(row)
    assert got == list(row.expected)
    for where, (episode_open, workflows) in row.final.items():
        state = states[f"org_1/wtp_1/{where}"].state
        assert (state.episode_open, state.episode_workflows) == (episode_open, workflows), where


def test_an_episode_shares_one_key_and_a_single_event_has_none() -> None:
    """The NOTIFYs and the RESOLVE of one episode carry one ``episode_key`` (one incident per
    workflow and episode); the next episode has another; BYPASS and DELTA events carry none."""
    row = Row("", METRIC_EXIT_2, (ev(0, 12), ev(1, 14), ev(2, 1), ev(3, 1), ev(4, 12)), ((),) * 5)
    _, _, results = run_row(row)
    keys = [rec["episode_key"] for r in results for rec, _ in r.decided]
    assert keys[0] == keys[1] == keys[2] == keys[3] and keys[4] not in (None, keys[0])
    actions = [a for r in results for _, out in r.decided for a in out.actions]
    assert {a["episode_key"] for a in actions if a["decision"] == "RESOLVE"} == {keys[0]}
    for profile in (None, DELTA):
        _, _, results = run_row(Row("", profile, (ev(0, 1), ev(1, 12)), ((),) * 2))
        assert {rec.get("episode_key") for r in results for rec, _ in r.decided} == {None}


def test_the_trace_says_each_stage_and_the_state_before_and_after() -> None:
    _, _, results = run_row(Row("", METRIC, (ev(0, 12), ev(1, 12)), ((),) * 2))
    [(first, out)] = results[0].decided
    assert [s["step"] for s in out.trace["steps"]] == ["accepted", "control", "workflows"]
    assert first["control"]["before"]["episode_open"] is False and first["control"]["after"]["episode_open"] is True
    [(second, _)] = results[1].decided
    assert second["control"]["reason"] and second["control"]["before"] == first["control"]["after"]


def test_process_reuses_the_previous_view_of_the_same_state() -> None:
    """``prior_view`` (the state and view the key's previous record left) is the next "before"
    only for that very state object, so a state written by another worker is viewed afresh."""
    cfg = _topic(METRIC, WORKFLOWS)
    key, record = _record(ev(0, 12), 0)
    first = process(record, None, cfg, key=key, offset=0)
    assert first.stored is not None and first.view is not None
    _, again = _record(ev(1, 12), 1)
    second = process(again, first.stored, cfg, key=key, offset=1, prior_view=first.view)
    assert second.decided[0][0]["control"]["before"] is first.view[1]
    other = process(again, load_control(dump_control(first.stored)), cfg, key=key, offset=1, prior_view=first.view)
    assert other.decided[0][0]["control"]["before"] == first.view[1]
    assert other.decided[0][0]["control"]["before"] is not first.view[1]


@pytest.mark.parametrize("profile", [None, METRIC_AUTO_1, SET])
def test_process_leaves_its_input_record_as_it_was(profile: dict[str, Any] | None) -> None:
    cfg = _topic(profile, WORKFLOWS)
    stored = None
    for index, item in enumerate((ev(0, 12, areas=("a",)), ev(MINUTE * 5, 12, areas=("b",)), tick(MINUTE * 9))):
        key, record = _record(item, index)
        before = repr(record)
        stored = process(record, stored, cfg, key=key, offset=index).stored or stored
        assert repr(record) == before


# Incidents of episodes: a batch of incident actions (the outputs above), the incidents found.
def _action(eff: str, decision: str, episode: str | None = "ep1", wf: str = "wf_all", **kw: Any) -> dict[str, Any]:
    return {
        "effect_id": f"act_{eff}",
        "event_id": f"evt_{eff}",
        "workflow_id": wf,
        "decision": decision,
        "episode_key": episode,
        "publisher_event_id": kw.get("publisher"),
        "title": "river level",
        "reason": kw.get("reason"),
        "accepted_ms": kw.get("at", 0),
    }


EPISODE_ROWS: list[tuple[str, list[dict[str, Any]], dict[str, str], list[str]]] = [
    (
        "the opening NOTIFY creates, a later one updates, the RESOLVE resolves",
        [_action("1", "NOTIFY"), _action("2", "NOTIFY", reason="peak"), _action("3", "RESOLVE", reason="stable")],
        {},
        ["CREATED inc_1 river level", "UPDATED inc_1 river level (peak)", "RESOLVED inc_1 released: stable"],
    ),
    (
        "a NOTIFY after a person resolved the incident opens a follow-up, linked from the old one",
        [_action("2", "NOTIFY"), _action("3", "RESOLVE")],
        {"ep1/wf_all": "RESOLVED"},
        [
            "CREATED inc_2 river level",
            "FOLLOWED_UP inc_old a NOTIFY after this incident was resolved opened inc_2",
            "RESOLVED inc_2 released: resolved",
        ],
    ),
    (
        "an opening NOTIFY arriving after later actions of its episode opens its incident, no follow-up",
        [_action("2", "NOTIFY", at=200), _action("3", "RESOLVE", at=300), _action("1", "NOTIFY", at=100)],
        {},
        ["CREATED inc_2 river level", "RESOLVED inc_2 released: resolved", "UPDATED inc_2 river level"],
    ),
    (
        "a NOTIFY accepted before the RESOLVE but arriving after it is a late entry, no follow-up",
        [
            _action("1", "NOTIFY", at=100),
            _action("3", "RESOLVE", at=300),
            _action("2", "NOTIFY", at=200, reason="peak"),
        ],
        {},
        ["CREATED inc_1 river level", "RESOLVED inc_1 released: resolved", "UPDATED inc_1 river level (peak)"],
    ),
    (
        "a RESOLVE with no incident in its episode does nothing",
        [_action("1", "RESOLVE", wf="wf_other")],
        {},
        [],
    ),
    (
        "a NOTIFY after a RESOLVE in the same batch reopens as a follow-up",
        [_action("1", "NOTIFY"), _action("2", "RESOLVE"), _action("3", "NOTIFY")],
        {},
        [
            "CREATED inc_1 river level",
            "RESOLVED inc_1 released: resolved",
            "CREATED inc_3 river level",
            "FOLLOWED_UP inc_1 a NOTIFY after this incident was resolved opened inc_3",
        ],
    ),
    (
        "single events: one incident per publisher event id while it is open",
        [
            _action("1", "NOTIFY", episode=None, publisher="p1"),
            _action("2", "NOTIFY", episode=None, publisher="p1"),
            _action("3", "NOTIFY", episode=None),
            _action("4", "NOTIFY", episode=None),
        ],
        {},
        [
            "CREATED inc_1 river level",
            "UPDATED inc_1 river level",
            "CREATED inc_3 river level",
            "CREATED inc_4 river level",
        ],
    ),
    (
        "an effect seen before changes nothing",
        [_action("1", "NOTIFY"), _action("1", "NOTIFY")],
        {},
        ["CREATED inc_1 river level"],
    ),
]


@pytest.mark.parametrize(("name", "actions", "found", "expected"), EPISODE_ROWS, ids=[r[0] for r in EPISODE_ROWS])
def test_episode_plan_table(
    name: str, actions: list[dict[str, Any]], found: dict[str, str], expected: list[str]
) -> None:
    by_episode = {tuple(k.split("/")): FoundIncident("inc_old", status) for k, status in found.items()}
    plan = plan_incident_actions(actions, set(), by_episode, {})  # type: ignore[arg-type]
    assert [f"{e.kind} {e.incident_id} {e.message}" for e in plan.entries] == expected
    created = {i for i, _ in plan.created}
    assert set(plan.resolved) <= created | {"inc_old"}
    assert plan.duplicates == len(actions) - len({a["effect_id"] for a in actions})


def test_a_late_opener_becomes_its_incidents_opening_action() -> None:
    late = _action("1", "NOTIFY", at=100)
    plan = plan_incident_actions([_action("2", "NOTIFY", at=200), late], set(), {}, {})
    assert [i for i, _ in plan.created] == ["inc_2"] and plan.reopened_by == {"inc_2": late}


def test_late_actions_go_to_the_incident_of_their_time_in_an_episode_with_a_follow_up() -> None:
    """inc_a opened at 100 and was resolved by a person at 200; inc_b, its follow-up, opened at 300."""
    first = FoundIncident("inc_a", "RESOLVED", 100, 200)
    newest = {("ep1", "wf_all"): FoundIncident("inc_b", "OPEN", 300, None, first)}
    inside_first, before_second, before_first = (
        _action(e, "NOTIFY", at=at) for e, at in (("x", 150), ("y", 250), ("z", 50))
    )
    plan = plan_incident_actions([inside_first, before_second, before_first], set(), newest, {})  # type: ignore[arg-type]
    assert [(e.kind, e.incident_id) for e in plan.entries] == [
        ("UPDATED", "inc_a"),
        ("UPDATED", "inc_b"),
        ("UPDATED", "inc_a"),
    ]
    assert plan.reopened_by == {"inc_b": before_second, "inc_a": before_first} and not plan.created


def test_episode_plan_counts_what_the_store_saw_before_as_duplicates() -> None:
    plan = plan_incident_actions([_action("1", "NOTIFY")], {"act_1"}, {}, {})
    assert (plan.created, plan.entries, plan.duplicates) == ([], [], 1)
