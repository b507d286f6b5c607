"""The workflow stage: for each decision, run the topic's workflows — mode, filter, actions —
and send the event's trace. It runs inside the control agent's loop (same key, same
partition): a separate agent behind a topic of decisions cost one more produce and consume
per event, a third of the worker's and the broker's CPU, for no isolation gained."""

from __future__ import annotations

import logging
from typing import Any

from app.domain.control import ControlDecision
from app.domain.workflow import action_effect_id, mode_matches, render_template
from app.faust_app import incident_actions_topic, traces_topic
from app.records import encode
from app.store.workflows import TopicConfig
from streams.dead_letter import send_dead_letter
from streams.resources import resources

log = logging.getLogger(__name__)


def _template_context(record: dict[str, Any], cfg: TopicConfig) -> dict[str, Any]:
    variables = {}
    for var in cfg.spec.get("template_variables") or []:
        value: Any = record.get("data", {})
        for part in str(var.get("path", "")).split("."):
            value = value.get(part) if isinstance(value, dict) else None
        variables[str(var.get("name"))] = value
    return {
        "event": record.get("event", {}),
        "data": record.get("data", {}),
        "var": variables,
        "decision": record["decision"],
        "status": record["status"],
    }


async def run_workflows(event: Any, record: dict[str, Any]) -> None:
    """Run the workflows of a decided event (``record`` carries ``decision`` and ``control``)."""
    event_id, org_id, topic_id = record["id"], record["organization_id"], record["topic_id"]
    cfg = await resources().topic_config(org_id, topic_id)
    steps: list[dict[str, Any]] = [
        {
            "step": "accepted",
            "detail": {
                "status": record["status"],
                "partition_key": record.get("event_control", {}).get("partition_key"),
                "publisher_event_id": record.get("event", {}).get("id"),
                "topic_id": topic_id,
            },
        },
        {"step": "control", "detail": record.get("control", {})},
    ]
    considered: list[dict[str, Any]] = []
    if cfg is None:
        considered.append({"skipped": "topic no longer exists"})
    else:
        await _run_topic_workflows(event, record, cfg, considered)
    steps.append({"step": "workflows", "detail": {"workflows": considered}})
    at_ms = record["accepted_ms"]
    await traces_topic.send(
        key=event.key,
        value=encode({"event_id": event_id, "organization_id": org_id, "at_ms": at_ms, "steps": steps}),
    )


async def _run_topic_workflows(
    event: Any, record: dict[str, Any], cfg: TopicConfig, considered: list[dict[str, Any]]
) -> None:
    decision = record["decision"]
    context = _template_context(record, cfg)
    for wf in cfg.workflows:
        entry: dict[str, Any] = {"workflow_id": wf.id, "mode": wf.mode, "mode_matched": False, "actions": []}
        considered.append(entry)
        if not mode_matches(wf.mode, record["status"]):
            continue
        entry["mode_matched"] = True
        entry["filter"] = {"result": True, "clauses": []}
        if decision == ControlDecision.SUPPRESS.value:
            continue
        for index, action in enumerate(wf.actions):
            effect = action_effect_id(record["id"], wf.id, index, decision)
            if action.get("type") != "RUN_OPERATION_BOOK":
                entry["actions"].append(
                    {
                        "index": index,
                        "type": action.get("type"),
                        "effect_id": effect,
                        "outcome": "unsupported action type",
                    }
                )
                continue
            book = cfg.books.get(str(action.get("operation_book_id")))
            if book is None:
                entry["actions"].append(
                    {"index": index, "type": action["type"], "effect_id": effect, "outcome": "operation book not found"}
                )
                await send_dead_letter("workflow", event, f"workflow {wf.id} references a missing operation book")
                continue
            await incident_actions_topic.send(
                key=event.key,
                value=encode(
                    {
                        "effect_id": effect,
                        "event_id": record["id"],
                        "organization_id": record["organization_id"],
                        "topic_id": record["topic_id"],
                        "workflow_id": wf.id,
                        "operation_book_id": book["id"],
                        "title": render_template(book["title"], context),
                        "member_user_ids": book["member_user_ids"],
                        "member_group_ids": book["member_group_ids"],
                        "partition_key": record.get("event_control", {}).get("partition_key"),
                        "publisher_event_id": record.get("event", {}).get("id"),
                        "mode": record["status"],
                        "decision": decision,
                        "accepted_ms": record["accepted_ms"],
                    }
                ),
            )
            entry["actions"].append(
                {"index": index, "type": action["type"], "effect_id": effect, "outcome": "requested"}
            )
