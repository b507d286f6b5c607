"""The control stage's decisions as metrics and as one structured line each (ids and outcome,
never the body), written together once per batch (app/observability/logs.py ``write_many``)."""

from __future__ import annotations

from typing import Any

from app.kafka.app import settings
from app.observability import logs, metrics

_decision_counts: dict[tuple[str, str], Any] = {}
_decision_lines: list[dict[str, Any]] = []


def start_batch() -> None:
    """Forget the lines of an attempt that failed before writing them: they come again."""
    _decision_lines.clear()


def flush_decision_log() -> None:
    """Write the batch's decision lines, one line per decision, with one write (a logging call
    per line cost more than the decision itself)."""
    if _decision_lines:
        logs.write_many("streams.control", "decision", _decision_lines)
        _decision_lines.clear()


def observe_decision(record: dict[str, Any], actions: int) -> None:
    """Count the decision and write its one structured line (ids and outcome, never the body)."""
    control = record["control"]
    label = (control["policy"], control["decision"])
    counter = _decision_counts.get(label)
    if counter is None:
        counter = _decision_counts[label] = metrics.DECISIONS.labels(*label)
    counter.inc()
    if settings.decision_log:
        _decision_lines.append(
            {
                "event_id": record["id"],
                "organization_id": record["organization_id"],
                "topic": record["topic_id"],
                "status": record["status"],
                "partition_key": (record.get("event_control") or {}).get("partition_key"),
                "policy": control["policy"],
                "decision": control["decision"],
                "reason": control.get("reason"),
                "actions": actions,
                **({"trace_id": record["trace_id"]} if "trace_id" in record else {}),
                **({"request_id": record["request_id"]} if isinstance(record.get("request_id"), str) else {}),
            }
        )
