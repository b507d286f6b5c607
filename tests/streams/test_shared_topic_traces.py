"""Issue 16, item 6: in a shared topic's event trace each organization sees its own workflows.
The topic owner's ``workflows`` step holds its workflows and a count of the receivers'; each
receiving organization's workflows (ids, filter clauses with their thresholds) go to a step
stored under that organization."""

from __future__ import annotations

from typing import Any

from app.domain.workflows.filters.compiled import compile_filter
from app.domain.workflows.topic_config import TopicConfig, WorkflowConfig
from app.domain.workflows.workflow_stage import run_workflows

FIELDS: list[dict[str, Any]] = [{"id": "level", "path": "level", "values": [{"type": "number"}]}]
SECRET_THRESHOLD = 4242


def _workflow(wf_id: str, org: str, value: int) -> WorkflowConfig:
    flt = {"field": "level", "operator": ">=", "value": value}
    hook = [{"type": "SEND_WEBHOOK", "url": "https://example.com/h", "secret": "whsec_x"}]
    return WorkflowConfig(
        wf_id, wf_id, "ACTUAL", flt, None, hook, compile_filter(flt, FIELDS), None, organization_id=org
    )


def test_each_organization_sees_only_its_workflows_in_a_shared_topics_trace() -> None:
    cfg = TopicConfig(
        "org_owner",
        "wtp_1",
        "quakes",
        {"fields": FIELDS, "access_scope": "public"},
        (
            _workflow("wfl_owner", "org_owner", 5),
            _workflow("wfl_b1", "org_b", SECRET_THRESHOLD),
            _workflow("wfl_b2", "org_b", 1),
            _workflow("wfl_c", "org_c", 2),
        ),
    )
    record = {
        "id": "evt_1",
        "organization_id": "org_owner",
        "topic_id": "wtp_1",
        "status": "ACTUAL",
        "accepted_ms": 1,
        "data": {"level": 7},
        "decision": "NOTIFY",
        "control": {},
    }
    trace = run_workflows(record, cfg).trace
    by_org: dict[str, list[dict[str, Any]]] = {}
    for step in trace["steps"]:
        by_org.setdefault(step.get("organization_id") or trace["organization_id"], []).append(step)

    owner_text = repr(by_org["org_owner"])
    for leaked in ("wfl_b1", "wfl_b2", "wfl_c", str(SECRET_THRESHOLD), "org_b", "org_c"):
        assert leaked not in owner_text, f"the owner's trace names {leaked}"
    [owner_workflows] = [s for s in by_org["org_owner"] if s["step"] == "workflows"]
    assert [w["workflow_id"] for w in owner_workflows["detail"]["workflows"]] == ["wfl_owner"]
    assert owner_workflows["detail"]["other_organizations_workflows"] == 3

    [b_step] = by_org["org_b"]
    assert b_step["step"] == "workflows@org_b"
    assert [w["workflow_id"] for w in b_step["detail"]["workflows"]] == ["wfl_b1", "wfl_b2"]
    assert "wfl_c" not in repr(b_step) and "wfl_owner" not in repr(b_step)
    [c_step] = by_org["org_c"]
    assert [w["workflow_id"] for w in c_step["detail"]["workflows"]] == ["wfl_c"]
