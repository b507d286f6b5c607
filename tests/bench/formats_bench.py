"""The ``formats`` section of ``make bench`` (issue 33): the ingress formats beside the native ones,
in the same run, on the same stack and topic.

- **CloudEvents binary mode vs native publish**: wrk posts the same event both ways, alternated
  native, CloudEvents, native, CloudEvents (a slow moment of this shared machine lands on both).
  The CloudEvent's ``ce-id`` is new for each request (``%ID%`` in publish.lua) and so is the native
  request's ``attributes.idempotency_key``: CloudEvents maps ``source`` + ``id`` onto that key, so both
  take the same path (the idempotency stage), and none is a duplicate. Target: CloudEvents >= 0.9 x native.
- **Alertmanager receiver vs batch publish**: a notification of :data:`ALERTS` firing alerts (one
  fingerprint each) and a batch of :data:`ALERTS` native requests (one partition key each), alternated
  likewise over :data:`~tests.bench.batch_bench.CONNECTIONS` connections; events (alerts) per second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

CE_TARGET = 0.9
ALERTS = 100  # alerts in one notification (Alertmanager groups alerts; a hundred is a big group)
DATA = {"magnitude": 5.5, "region": "kanto"}
NATIVE_UNIQUE = orjson.dumps(
    {
        "status": "ACTUAL",
        "data": DATA,
        "event": {"name": "bench event"},
        "event_control": {"partition_key": "site-1"},
        "attributes": {"idempotency_key": "/bench#%ID%"},
    }
).decode()
CE_HEADERS = "\n".join(
    [
        "ce-specversion: 1.0",
        "ce-id: %ID%",
        "ce-source: /bench",
        "ce-type: bench event",
        "ce-partitionkey: site-1",
    ]
)
RUNS = ("native", "cloudevents", "native", "cloudevents")
BATCH_RUNS = ("batch", "alertmanager", "batch", "alertmanager")


def lua_env(kind: str) -> dict[str, str]:
    """publish.lua's settings of a run of ``kind`` (native or cloudevents)."""
    if kind == "cloudevents":
        return {"BENCH_BODY": orjson.dumps(DATA).decode(), "BENCH_HEADERS": CE_HEADERS, "BENCH_UNIQUE": "ce"}
    return {"BENCH_BODY": NATIVE_UNIQUE, "BENCH_UNIQUE": "nat"}


def write_alertmanager_body(path: Path) -> Path:
    """A notification (webhook version 4) of :data:`ALERTS` firing alerts."""
    alerts = [
        {
            "status": "firing",
            "labels": {"alertname": "DiskFull", "instance": f"db{i}", "severity": "page"},
            "annotations": {"summary": f"disk full on db{i}"},
            "startsAt": "2026-11-28T10:00:00Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus/graph",
            "fingerprint": f"{i:016x}",
        }
        for i in range(ALERTS)
    ]
    notification = {"version": "4", "status": "firing", "receiver": "tocsin", "groupKey": "{}", "alerts": alerts}
    path.write_bytes(orjson.dumps(notification))
    return path


def write_small_batch_body(path: Path) -> Path:
    """A batch of :data:`ALERTS` native requests, one partition key each (as the alerts' fingerprints)."""
    items = [
        {
            "status": "ACTUAL",
            "data": DATA,
            "event": {"name": "bench event"},
            "event_control": {"partition_key": f"{i:016x}"},
        }
        for i in range(ALERTS)
    ]
    path.write_bytes(orjson.dumps(items))
    return path


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def formats_figures(runs: list[dict[str, Any]], batch_runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Rates of each kind (medians of its runs; None when a run had errors) and the ratios."""

    def rate(of: list[dict[str, Any]], kind: str, per_request: int = 1) -> float | None:
        mine = [r for r in of if r["kind"] == kind]
        if not mine or not all(r["valid"] for r in mine):
            return None
        return round(_median([r["rps"] for r in mine]) * per_request, 1)

    native, ce = rate(runs, "native"), rate(runs, "cloudevents")
    batch, alerts = rate(batch_runs, "batch", ALERTS), rate(batch_runs, "alertmanager", ALERTS)
    ce_ratio = round(ce / native, 3) if ce and native else None
    return {
        "runs": runs,
        "batch_runs": batch_runs,
        "events_per_s": {"native": native, "cloudevents_binary": ce, "batch": batch, "alertmanager": alerts},
        "ratio_cloudevents_native": ce_ratio,
        "target_cloudevents_native": CE_TARGET,
        "met": None if ce_ratio is None else ce_ratio >= CE_TARGET,
        "ratio_alertmanager_batch": round(alerts / batch, 3) if alerts and batch else None,
        "alerts_per_notification": ALERTS,
        "errors": sum(r["errors"] for r in (*runs, *batch_runs)),
    }


def render_formats(fig: dict[str, Any]) -> list[str]:
    eps = fig["events_per_s"]

    def rate(value: float | None) -> str:
        return "ERRORS" if value is None else f"{value:,.0f}"

    def run_line(run: dict[str, Any]) -> str:
        cpu = run.get("cpu_pct", {})
        return (
            f"  {run['kind']:<13} {rate(run['rps'] if run['valid'] else None):>8} req/s, p50 {run.get('p50_ms')} ms, "
            f"p99 {run.get('p99_ms')} ms; CPU% api {cpu.get('api')}, broker {cpu.get('broker')}, "
            f"worker {cpu.get('worker')}"
        )

    ratio = fig["ratio_cloudevents_native"]
    verdict = "n/a (a run had errors)" if ratio is None else ("met" if fig["met"] else "NOT met")
    return [
        "single publish, events/s (median of the runs):",
        f"  native publish             {rate(eps['native']):>10}",
        f"  CloudEvents binary mode    {rate(eps['cloudevents_binary']):>10}  "
        f"= {ratio} x native (target >= {fig['target_cloudevents_native']}: {verdict})",
        *(run_line(r) for r in fig["runs"]),
        f"{fig['alerts_per_notification']} events a request, events/s (median of the runs):",
        f"  batch publish              {rate(eps['batch']):>10}",
        f"  Alertmanager receiver      {rate(eps['alertmanager']):>10}  alerts/s "
        f"= {fig['ratio_alertmanager_batch']} x batch publish",
        *(run_line(r) for r in fig["batch_runs"]),
    ]
