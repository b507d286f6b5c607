"""The workflow stage: for a decided event, run the topic's workflows — mode, sharing, sites,
filter, actions — and build the event's trace. Pure: it returns what to send. The per-event
pipeline (app/domain/pipeline.py) runs it after the control stage, inside the control agent's
loop (same key, same partition); the agent sends a batch's outputs together (a separate agent
behind a topic of decisions cost one more produce and consume per event, for no isolation
gained)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from app.domain.delivery import kinds as delivery_kinds
from app.domain.delivery.webhooks import webhook_body
from app.domain.events.control import ControlDecision
from app.domain.iam.sharing import targeted
from app.domain.workflows.filters.sites import site_matches
from app.domain.workflows.topic_config import TopicConfig, WorkflowConfig
from app.domain.workflows.workflow import action_effect_id, mode_matches, release_reaches, render_template, stamped


@dataclass(slots=True)
class WorkflowOutputs:
    """What one event asks to send: incident actions, its trace, and dead-letter reasons."""

    actions: list[dict[str, Any]] = field(default_factory=list)
    deliveries: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (PUSH|EMAIL|WEBHOOK, item)
    trace: dict[str, Any] = field(default_factory=dict)
    dead_letters: list[str] = field(default_factory=list)
    # The workflows that ran for a NOTIFY (mode, sharing, sites and filter passed): the agent
    # keeps them in the episode's state, so that its release reaches them.
    notified: list[str] = field(default_factory=list)
    context: dict[str, Any] | None = None  # the templates' context, built for the first action that renders one


# The incident action of the source's acknowledge (the event's control decision is SUPPRESS)
ACKNOWLEDGE = "ACKNOWLEDGE"

# An absent mapping's default, only read (``.get(k, {})`` builds a dict on every call).
_NOTHING: Mapping[str, Any] = MappingProxyType({})
# Enum members read once: a class attribute of an Enum costs several times a module global's.
_NOTIFY, _SUPPRESS, _RESOLVE = ControlDecision.NOTIFY, ControlDecision.SUPPRESS, ControlDecision.RESOLVE


def episode_key(state_key: str, episode_seq: int) -> str:
    """The id of one control episode (all incidents of an episode share it, one per workflow)."""
    return hashlib.sha256(f"{state_key}#{episode_seq}".encode()).hexdigest()[:32]


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


def run_workflows(
    record: dict[str, Any], cfg: TopicConfig | None, episode_workflows: Collection[str] | None = None
) -> WorkflowOutputs:
    """The workflows of a decided event (``record`` carries ``decision`` and ``control``). For a
    RESOLVE, ``episode_workflows`` are the workflows that ran for its episode's NOTIFYs: the
    release reaches exactly those, past their filter and sites (``None``: not known, the filter
    and sites decide)."""
    out = WorkflowOutputs()
    steps = [accepted_step(record)]
    if "idempotency" in record:
        steps.append({"step": "idempotency", "detail": record["idempotency"]})
    steps.append({"step": "control", "detail": record.get("control", {})})
    considered: list[dict[str, Any]] = []
    if cfg is None:
        considered.append({"skipped": "topic no longer exists"})
    else:
        _run_topic_workflows(record, cfg, considered, out, episode_workflows)
    steps.extend(workflow_steps(considered))
    out.trace = trace_record(record, steps)
    return out


def workflow_steps(considered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``workflows`` step of the topic's organization — its own workflows, and how many of
    other organizations receiving the (shared) topic were considered, never which — and one
    ``workflows@<org>`` step per receiving organization with its workflows, stored under that
    organization (``organization_id``): each sees its own workflow ids, filters and thresholds."""
    own: list[dict[str, Any]] = []
    others: dict[str, list[dict[str, Any]]] = {}
    for entry in considered:
        other = entry.get("organization_id")
        if other:
            others.setdefault(str(other), []).append(entry)
        else:
            own.append(entry)
    detail: dict[str, Any] = {"workflows": own}
    if others:
        detail["other_organizations_workflows"] = sum(len(entries) for entries in others.values())
    steps: list[dict[str, Any]] = [{"step": "workflows", "detail": detail}]
    for org, entries in sorted(others.items()):
        steps.append({"step": f"workflows@{org}", "organization_id": org, "detail": {"workflows": entries}})
    return steps


def accepted_step(record: dict[str, Any]) -> dict[str, Any]:
    """The first step of every event's trace: what was accepted."""
    detail = {
        "status": record.get("status"),
        "partition_key": (record.get("event_control") or {}).get("partition_key"),
        "publisher_event_id": (record.get("event") or {}).get("id"),
        "topic_id": record.get("topic_id"),
    }
    if record.get("kind") == "tick":
        detail["kind"] = "tick"
    trace_id = record.get("trace_id")
    if trace_id:  # the OpenTelemetry trace of the publish, when tracing is on (app/observability/tracing.py)
        detail["trace_id"] = trace_id
    return {"step": "accepted", "detail": detail}


def trace_record(record: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The record the trace sink stores for one event."""
    return {
        "event_id": record["id"],
        "organization_id": record["organization_id"],
        "at_ms": record["accepted_ms"],
        "steps": steps,
    }


DELIVERY_KINDS = {kind.action: kind.name for kind in delivery_kinds.KINDS}


def _run_topic_workflows(
    record: dict[str, Any],
    cfg: TopicConfig,
    considered: list[dict[str, Any]],
    out: WorkflowOutputs,
    episode_workflows: Collection[str] | None,
) -> None:
    decision = record["decision"]
    # the source's acknowledge (a SUPPRESS): it reaches what a release would, and only acknowledges
    acknowledge = decision == _SUPPRESS and bool(record.get("acknowledge"))
    release = decision == _RESOLVE or acknowledge
    acted = ACKNOWLEDGE if acknowledge else decision
    data = record.get("data")
    fields = cfg.spec.get("fields") or []
    targets = (record.get("attributes") or {}).get("target_organization_ids")
    for wf in cfg.workflows:
        entry: dict[str, Any] = {"workflow_id": wf.id, "mode": wf.mode, "mode_matched": False, "actions": []}
        considered.append(entry)
        reaches = release_reaches(episode_workflows, wf.id) if release else None
        if wf.organization_id and wf.organization_id != cfg.org_id:
            entry["organization_id"] = wf.organization_id  # a receiving organization's workflow
            if wf.receive_error is not None:
                entry["shared"] = {"result": False, "reason": wf.receive_error}
                continue
            if not reaches and not targeted(targets, wf.organization_id, cfg.org_id):
                entry["shared"] = {"result": False, "reason": "not among the publish's target_organization_ids"}
                continue
            entry["shared"] = {"result": True}
        if not mode_matches(wf.mode, record["status"]):
            continue
        entry["mode_matched"] = True
        if reaches is not None:
            # A release reaches the workflows of its episode, whatever its data: no sites, no filter.
            entry["release"] = {
                "result": reaches,
                "reason": "ran for the episode's NOTIFY" if reaches else "did not run for the episode's NOTIFY",
            }
            if reaches:
                _run_actions(record, cfg, wf, acted, entry, out)
            continue
        if wf.sites:
            site_ok, entry["site"] = site_matches(wf.sites, fields, data)
            if not site_ok:
                continue
        if wf.compiled is None:
            entry["filter"] = {
                "result": False,
                "error": f"the filter no longer fits the topic's fields: {wf.filter_error}",
            }
            continue
        if wf.filter is None:
            entry["filter"] = {"result": True, "clauses": []}
        else:
            matched, clauses = wf.compiled.evaluate(data)
            entry["filter"] = {"result": matched, "clauses": clauses}
            if not matched:
                continue
        if decision == _SUPPRESS and not acknowledge:
            continue
        if decision == _NOTIFY:
            out.notified.append(wf.id)
        _run_actions(record, cfg, wf, acted, entry, out)


def _run_actions(
    record: dict[str, Any],
    cfg: TopicConfig,
    wf: WorkflowConfig,
    decision: str,
    entry: dict[str, Any],
    out: WorkflowOutputs,
) -> None:
    for index, action in enumerate(wf.actions):
        effect = action_effect_id(record["id"], wf.id, index, decision)
        kind = action.get("type")
        step: dict[str, Any] = {"index": index, "type": kind, "effect_id": effect}
        entry["actions"].append(step)
        if out.context is None:
            out.context = _template_context(record, cfg)
        context = out.context
        if kind == "RUN_OPERATION_BOOK":
            _operation_book(record, cfg, wf, action, effect, context, step, out, decision)
        elif decision == ACKNOWLEDGE:
            step["outcome"] = "not sent: an acknowledge only changes the incident"
        elif kind in DELIVERY_KINDS:
            if index in wf.disabled_actions:
                step["outcome"] = "endpoint disabled (410 Gone); update the workflow to enable it again"
                continue
            out.deliveries.append((DELIVERY_KINDS[kind], _delivery(record, cfg, wf, index, action, effect, context)))
            step["outcome"] = "requested"
        else:
            step["outcome"] = "unsupported action type"


def _operation_book(
    record: dict[str, Any],
    cfg: TopicConfig,
    wf: WorkflowConfig,
    action: dict[str, Any],
    effect: str,
    context: dict[str, Any],
    step: dict[str, Any],
    out: WorkflowOutputs,
    decision: str,
) -> None:
    book = cfg.books.get(str(action.get("operation_book_id")))
    if book is None:
        step["outcome"] = "operation book not found"
        out.dead_letters.append(f"workflow {wf.id} references a missing operation book")
        return
    out.actions.append(
        {
            "effect_id": effect,
            "event_id": record["id"],
            "organization_id": wf.organization_id or record["organization_id"],  # the incident's owner
            "topic_id": record["topic_id"],
            "workflow_id": wf.id,
            "operation_book_id": book["id"],
            "title": stamped(render_template(book["title"], context), record["status"], "NOTIFY"),
            "member_user_ids": book["member_user_ids"],
            "member_group_ids": book["member_group_ids"],
            "partition_key": record.get("event_control", _NOTHING).get("partition_key"),
            "publisher_event_id": record.get("event", _NOTHING).get("id"),
            "mode": record["status"],
            "decision": decision,
            "episode_key": record.get("episode_key"),
            "reason": record.get("control", _NOTHING).get("reason"),
            "accepted_ms": record["accepted_ms"],
        }
    )
    step["outcome"] = "requested"


def _delivery(
    record: dict[str, Any],
    cfg: TopicConfig,
    wf: WorkflowConfig,
    index: int,
    action: dict[str, Any],
    effect: str,
    context: dict[str, Any],
) -> dict[str, Any]:
    """A push, e-mail or webhook request, with what it says rendered now (the executor resolves
    secrets and recipients itself, so neither travels through Kafka)."""
    mode, decision = record["status"], record["decision"]
    item: dict[str, Any] = {
        "effect_id": effect,
        "event_id": record["id"],
        "organization_id": wf.organization_id or record["organization_id"],  # whose delivery it is
        "topic_organization_id": record["organization_id"],
        "topic_id": record["topic_id"],
        "workflow_id": wf.id,
        "action_index": index,
        "mode": mode,
        "decision": decision,
        "accepted_ms": record["accepted_ms"],
        "attempt": 1,
        "replay": 0,
    }
    kind = action["type"]
    if kind == "SEND_EMAIL":
        item["content"] = {
            "to": list(action.get("to") or []),
            "subject": stamped(render_template(str(action.get("subject", "")), context), mode, decision),
            "body": render_template(str(action.get("body", "")), context),
        }
    elif kind == "SEND_WEBHOOK":
        item["content"] = {
            "url": action.get("url"),
            "body": webhook_body(record, decision, cfg.key, None).decode(),
        }
    else:  # SEND_PUSH_NOTIFICATION: the executor maps it to APNs and FCM payloads
        item["content"] = {
            "user_ids": list(action.get("user_ids") or []),
            "group_ids": list(action.get("group_ids") or []),
            "topic_name": cfg.spec.get("name_en") or cfg.spec.get("name_ja") or cfg.key,
            "event": record.get("event") or {},
            "notification": record.get("notification"),
            "data": record.get("data") or {},
        }
    return item
