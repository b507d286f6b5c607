"""The control agent's decisions as metrics and as one structured line each (ids and outcome,
never the body), written once per batch."""

from __future__ import annotations

import logging
from typing import Any

from app.kafka.app import settings
from app.observability import logfmt, metrics

log = logging.getLogger("streams.control")

_decision_counts: dict[tuple[str, str], Any] = {}
_decision_lines: list[str] = []


def start_batch() -> None:
    """Forget the lines of an attempt that failed before writing them: they come again."""
    _decision_lines.clear()


def flush_decision_log() -> None:
    """Write the batch's decision lines with one logging call (a call per line cost more than
    the decision itself): one record whose message is one logfmt line per decision."""
    if _decision_lines:
        if log.isEnabledFor(logging.INFO):
            log.info("\n".join(_decision_lines))
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
            logfmt.line(
                "decision",
                event_id=record["id"],
                org=record["organization_id"],
                topic=record["topic_id"],
                status=record["status"],
                partition_key=(record.get("event_control") or {}).get("partition_key"),
                policy=control["policy"],
                decision=control["decision"],
                reason=control.get("reason"),
                actions=actions,
            )
        )
