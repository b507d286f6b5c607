"""A release belongs to its episode (issue 14, defect 3): the RESOLVE of exit_stable_limit or of
auto_resolve_duration reaches every workflow that ran for the episode's NOTIFY, whatever the
releasing event's data — a tick has none, a value back below the threshold fails a filter such
as ``level >= 10`` — and only those. The workflows are kept in the stored control state."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from app.domain.events.control import ControlDecision, ControlState, Policy, joined
from app.domain.pipeline import StoredControl, apply_policy
from app.domain.workflows.filters.compiled import compile_filter
from app.domain.workflows.topic_config import TopicConfig, WorkflowConfig
from app.domain.workflows.workflow import release_reaches
from app.domain.workflows.workflow_stage import run_workflows
from tables.codecs import dump_control, load_control

FIELDS: list[dict[str, Any]] = [
    {"id": "level", "path": "level", "values": [{"type": "number"}]},
    {"id": "site", "path": "site", "values": [{"type": "string"}], "site": True},
]
BOOK = {"id": "obk_1", "title": "{event.name}", "member_user_ids": [], "member_group_ids": []}


def _workflow(wf_id: str, flt: dict[str, Any] | None = None, sites: list[str] | None = None) -> WorkflowConfig:
    actions = [{"type": "RUN_OPERATION_BOOK", "operation_book_id": "obk_1"}]
    return WorkflowConfig(wf_id, wf_id, "ACTUAL", flt, sites, actions, compile_filter(flt, FIELDS), None)


FILTERED = _workflow("wfl_filtered", {"field": "level", "operator": ">=", "value": 10})
SITED = _workflow("wfl_sited", sites=["tokyo"])
NEVER = _workflow("wfl_never", {"field": "level", "operator": "<", "value": 0})  # matches no event here
OTHER_MODE = WorkflowConfig("wfl_drill", "drill", "DRILL", None, None, FILTERED.actions, compile_filter(None, FIELDS))


def _topic(profile: dict[str, Any]) -> TopicConfig:
    spec = {"fields": FIELDS, "control_policy_profile": profile}
    workflows = (FILTERED, SITED, NEVER, OTHER_MODE)
    return TopicConfig("org_1", "wtp_1", "river", spec, workflows, {"obk_1": BOOK})


def _event(event_id: str, at_ms: int, level: float, site: str = "tokyo") -> dict[str, Any]:
    return {
        "id": event_id,
        "organization_id": "org_1",
        "topic_id": "wtp_1",
        "status": "ACTUAL",
        "accepted_ms": at_ms,
        "event": {"name": "river level"},
        "data": {"level": level, "site": site},
        "event_control": {"partition_key": "st-1", "metrics": {"level": level}},
    }


def _run(cfg: TopicConfig, stored: StoredControl | None, record: dict[str, Any], offset: int) -> tuple[Any, Any]:
    """What the control agent does with one record: the policy, the workflow stage per outcome
    (a RESOLVE with the episode's workflows), the workflows of a NOTIFY kept in the state, and the
    state through its codec (as a restart reads it back from the changelog)."""
    policy = Policy.from_profile(cfg.spec["control_policy_profile"])
    steps, new = apply_policy(policy, stored, record, offset)
    outputs = []
    for rec, outcome, before in steps:
        rec["decision"] = outcome.decision
        rec["control"] = {"decision": outcome.decision, "reason": outcome.reason}
        out = run_workflows(rec, cfg, before.episode_workflows)
        outputs.append((outcome.decision, out))
        if out.notified and outcome.state.episode_open:
            new = StoredControl(joined(new.state, out.notified), new.offset, new.seq, new.due_ms)
    return outputs, load_control(dump_control(new))


def _released(outputs: list[Any]) -> set[str]:
    return {a["workflow_id"] for d, out in outputs if d is ControlDecision.RESOLVE for a in out.actions}


@pytest.mark.parametrize("how", ["exit_stable_limit", "auto_resolve_tick"])
def test_release_reaches_filtered_and_sited_workflows_of_the_episode_whatever_its_data(how: str) -> None:
    profile = {
        "type": "METRIC",
        "rules": [{"metric_name": "level", "threshold": 10}],
        "exit_stable_limit": 1,
        "auto_resolve_duration": 1,
    }
    cfg = _topic(profile)
    outputs, stored = _run(cfg, None, _event("evt_1", 0, 12), 0)
    [(decision, opening)] = outputs
    assert decision is ControlDecision.NOTIFY
    assert opening.notified == ["wfl_filtered", "wfl_sited"]
    assert stored.state.episode_workflows == ("wfl_filtered", "wfl_sited")

    if how == "exit_stable_limit":  # level 2 at another site: the filter and the sites both refuse it
        release = _event("evt_2", 1_000, 2, site="osaka")
    else:  # a tick carries no data at all
        release = {**_event("tick_1", 60_000, 0), "kind": "tick", "data": None, "event": {}}
        release["event_control"] = {"partition_key": "st-1"}
    outputs, after = _run(cfg, stored, release, 1)
    assert [d for d, _ in outputs] == [ControlDecision.RESOLVE]
    assert _released(outputs) == {"wfl_filtered", "wfl_sited"}
    considered = {w["workflow_id"]: w for w in outputs[0][1].trace["steps"][-1]["detail"]["workflows"]}
    assert considered["wfl_filtered"]["release"]["result"] is True and "filter" not in considered["wfl_filtered"]
    assert considered["wfl_never"]["release"]["result"] is False and considered["wfl_never"]["actions"] == []
    assert considered["wfl_drill"]["mode_matched"] is False  # the mode rule still applies
    assert not after.state.episode_open and after.state.episode_workflows == ()


def test_a_later_notify_of_the_episode_adds_its_workflows_and_a_new_episode_starts_empty() -> None:
    cfg = _topic({"type": "METRIC", "rules": [{"metric_name": "level", "threshold": 10}], "exit_stable_limit": 1})
    _, stored = _run(cfg, None, _event("evt_1", 0, 12, site="osaka"), 0)
    assert stored.state.episode_workflows == ("wfl_filtered",)
    _, stored = _run(cfg, stored, _event("evt_2", 1, 13), 1)  # a new peak at the sited workflow's site
    assert stored.state.episode_workflows == ("wfl_filtered", "wfl_sited")
    outputs, stored = _run(cfg, stored, _event("evt_3", 2, 1), 2)
    assert _released(outputs) == {"wfl_filtered", "wfl_sited"}
    outputs, stored = _run(cfg, stored, _event("evt_4", 3, 11, site="osaka"), 3)
    assert stored.state.episode_seq == 2 and stored.state.episode_workflows == ("wfl_filtered",)


def test_a_set_release_by_tick_reaches_the_episode_workflows() -> None:
    cfg = _topic({"type": "SET", "auto_resolve_duration": 1})
    record = {**_event("evt_1", 0, 12), "event_control": {"partition_key": "st-1", "areas": ["a"]}}
    _, stored = _run(cfg, None, record, 0)
    tick = {**_event("tick_1", 60_000, 0), "kind": "tick", "data": None, "event_control": {"partition_key": "st-1"}}
    outputs, _ = _run(cfg, stored, tick, 1)
    assert _released(outputs) == {"wfl_filtered", "wfl_sited"}


def test_a_state_stored_before_episode_workflows_were_kept_still_decodes() -> None:
    """Old values stay readable: an open episode's workflows are then not known (None), and its
    release goes through each workflow's filter and sites as it did; a closed one has none."""
    old_open = {
        "v": 1,
        "offset": 4,
        "seq": 5,
        "due_ms": None,
        "state": {
            "policy_type": "METRIC",
            "episode_open": True,
            "episode_seq": 1,
            "peaks": [["level", 12.0, 0]],
            "last_values": [["level", 12.0]],
            "stable_count": 0,
            "set_members": [],
            "last_decision": "NOTIFY",
            "last_notify_ms": 0,
        },
    }
    stored = load_control(orjson.dumps(old_open))
    assert stored is not None and stored.state.episode_workflows is None and stored.offset == 4
    closed = load_control(orjson.dumps({**old_open, "state": {**old_open["state"], "episode_open": False}}))
    assert closed is not None and closed.state.episode_workflows == ()
    assert joined(stored.state, ["wfl_x"]) is stored.state  # unknown stays unknown for that episode
    assert release_reaches(None, "wfl_x") is None and release_reaches(("wfl_x",), "wfl_x") is True

    cfg = _topic({"type": "METRIC", "rules": [{"metric_name": "level", "threshold": 10}], "exit_stable_limit": 1})
    outputs, _ = _run(cfg, stored, _event("evt_9", 1, 2), 5)
    assert _released(outputs) == {"wfl_sited"}  # the filter (level >= 10) decides, as before


def test_joined_keeps_first_seen_order_and_ignores_closed_states() -> None:
    state = ControlState(policy_type="METRIC", episode_open=True, episode_workflows=("a",))
    assert joined(state, ["b", "a", "b", "c"]).episode_workflows == ("a", "b", "c")
    assert joined(ControlState(), ["a"]) == ControlState()


def test_a_policy_type_change_releases_the_open_episode_to_its_workflows_before_the_event() -> None:
    """Issue 14, defect 9: the state of the old type has an open episode; the next record under the
    new type first releases it (RESOLVE, reason policy_changed) to the workflows that ran for it."""
    metric = _topic({"type": "METRIC", "rules": [{"metric_name": "level", "threshold": 10}]})
    _, stored = _run(metric, None, _event("evt_1", 0, 12), 0)
    as_set = _topic({"type": "SET"})
    record = {**_event("evt_2", 1_000, 1), "event_control": {"partition_key": "st-1", "areas": ["a"]}}
    outputs, after = _run(as_set, stored, record, 1)
    assert [d for d, _ in outputs] == [ControlDecision.RESOLVE, ControlDecision.NOTIFY]
    release = outputs[0][1]
    assert _released(outputs) == {"wfl_filtered", "wfl_sited"}
    assert release.actions[0]["reason"] == "policy_changed (METRIC → SET)"
    assert release.trace["event_id"] != "evt_2"  # a record of its own, with an id derived from the event's
    assert after.state.policy_type == "SET" and after.state.episode_seq == 2  # a new episode, a new id
