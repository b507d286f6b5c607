"""What an operator reads: readiness of the API and the worker, Prometheus metrics of both,
and one structured log line per request and per decision that never holds a token or a body."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable

import httpx
import psutil
import pytest

from app.settings import Settings
from tests.support.logs import records
from tests.support.scaling import decision_lines, spec_decisions
from tests.support.stack import Stack, wait_for
from tests.support.workflows import setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
SECRET_MARK = "do-not-log-this-body-7f3a"


def _metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the Prometheus text exposition (0 when absent)."""
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? ([0-9.e+-]+)", line)
        if match and match.group(1) == name:
            got = ",".join(sorted(p for p in (match.group(2) or "").split(",") if p))
            if got == want:
                return float(match.group(3))
    return 0.0


def test_readiness_metrics_and_logs(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory(extra_env={"TOCSIN_ACCESS_LOG": "true"}).start()
    token = stack.credentials["access_token"]
    api, worker = stack.base_url, stack.worker_urls[0]
    for url in (api, worker):
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
        ready = httpx.get(f"{url}/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "ready", ready.text
    assert set(httpx.get(f"{worker}/readyz").json()["checks"]) == {"database", "broker", "tables"}

    n = 20
    with stack.client() as c:
        setup_topic(c, "levels", {"type": "METRIC", "rules": [{"metric_name": "v", "threshold": 10}]})
        ids = []
        by_key: dict[str, list[tuple[str, float]]] = defaultdict(list)  # partition key → (event id, value)
        for i in range(n):
            key, value = f"k{i % 4}", 20.0 if i % 2 else 1.0
            body = {
                "status": "ACTUAL",
                "data": {"secret": SECRET_MARK},
                "event_control": {"partition_key": key, "metrics": {"v": value}},
            }
            r = c.post("/workflow_topics/levels/publish", json=body, headers={"X-Request-ID": f"rid-{i}"})
            assert r.status_code == 202, r.text
            ids.append(r.json()["id"])
            by_key[key].append((ids[-1], value))
        refused = c.post("/workflow_topics/levels/publish", json={"status": "NOPE"})
        assert refused.status_code == 422

    worker_log = stack.worker_logs[0]
    decided = wait_for(
        lambda: (
            (found := [(e, d) for e, ds in decision_lines([worker_log]).items() for d in ds])
            and len({e for e, _ in found} & set(ids)) == n
            and found
        ),
        60,
        "a decision line for every event",
    )
    # The spec's METRIC table gives each event's decision (k1 and k3: 20, 20, …: one NOTIFY, then
    # SUPPRESS at the held peak; k0 and k2: always below T): one line per event, that decision.
    expected = {
        e: d
        for pairs in by_key.values()
        for (e, _), d in zip(pairs, spec_decisions([v for _, v in pairs], threshold=10), strict=True)
    }
    assert sorted(d for e, d in decided if e in expected) == sorted(expected.values())
    assert {e: d for e, d in decided if e in expected} == expected
    kinds = set(expected.values())

    api_metrics = httpx.get(f"{api}/metrics")
    assert api_metrics.headers["content-type"].startswith("text/plain")
    assert _metric(api_metrics.text, "tocsin_publishes_total", outcome="accepted", status="202") == n
    assert _metric(api_metrics.text, "tocsin_publishes_total", outcome="refused", status="422") == 1
    route = "/v1/organizations/{org_id}/workflow_topics/{topic}/publish"
    assert _metric(api_metrics.text, "tocsin_http_requests_total", method="POST", route=route, status="202") == n

    def worker_metrics() -> str | None:
        text = httpx.get(f"{worker}/metrics").text
        decisions = sum(
            _metric(text, "tocsin_decisions_total", policy="METRIC", decision=d)
            for d in ("NOTIFY", "SUPPRESS", "UPDATE", "RESOLVE")
        )
        return text if decisions >= n else None

    try:
        text = wait_for(worker_metrics, 60, "the worker's decision counters")
    except AssertionError:
        raise AssertionError(httpx.get(f"{worker}/metrics").text[-3000:]) from None
    counted = {d: _metric(text, "tocsin_decisions_total", policy="METRIC", decision=d) for d in ("NOTIFY", "SUPPRESS")}
    assert counted == {d: float(list(expected.values()).count(d)) for d in ("NOTIFY", "SUPPRESS")}, counted
    assert "tocsin_consumer_lag{" in text, "the lag of each assigned partition"

    def lag_series() -> dict[str, float] | None:
        series = {
            line.split(" ")[0]: float(line.split(" ")[1])
            for line in httpx.get(f"{worker}/metrics").text.splitlines()
            if line.startswith("tocsin_consumer_lag{")
        }
        return series if series and max(series.values()) <= 1 else None  # 1: a last commit marker (README)

    # every event decided: nothing left to read (the README's drain check); the tables' changelogs
    # are not what the agents consume, and are not counted (they showed stale thousands before)
    lags = wait_for(lag_series, 30, "a consumer lag of at most 1 on every partition once all is decided")
    assert not [name for name in lags if "changelog" in name], lags
    for name in ("tocsin_build_info{", "process_resident_memory_bytes ", "python_gc_objects_collected_total{"):
        assert name in text, f"the worker's {name} (deploy/grafana/tocsin.json charts it)"

    api_log = (stack.var_dir / "api.log").read_text()
    lines = [
        r
        for r in records(stack.var_dir / "api.log")
        if r.get("event") == "request" and r.get("method") == "POST" and r["path"].endswith("/publish")
    ]
    assert len(lines) == n + 1
    assert all(r["status"] in (202, 422) and isinstance(r["ms"], float) and r["request_id"] for r in lines)
    assert {f"rid-{i}" for i in range(n)} <= {r["request_id"] for r in lines}
    for text, where in ((api_log, "API log"), (worker_log.read_text(), "worker log")):
        assert token not in text and token.split("_", 1)[-1][:16] not in text, f"a token in the {where}"
        assert SECRET_MARK not in text, f"an event body in the {where}"
    print(
        f"\noperations: API and worker ready; {n} publishes → {n} request lines and {n} decision lines "
        f"({sorted(kinds)}), metrics counted them, no token or body in either log"
    )


def test_the_worker_port_serves_only_health_readiness_and_metrics_on_loopback(
    stack_factory: Callable[..., Stack],
) -> None:
    stack = stack_factory()
    stack.bootstrap()
    proc = stack.start_worker()
    stack.wait_worker_ready()
    worker = stack.worker_urls[0]
    port = int(worker.rpartition(":")[2])
    listening = [c.laddr for c in psutil.Process(proc.pid).net_connections("inet") if c.status == psutil.CONN_LISTEN]
    assert [(a.ip, a.port) for a in listening if a.port == port] == [("127.0.0.1", port)], listening
    assert Settings.model_fields["worker_host"].default == "127.0.0.1", "loopback unless TOCSIN_WORKER_HOST says"
    for path in ("/healthz", "/readyz", "/metrics"):
        assert httpx.get(f"{worker}{path}").status_code == 200, path
    assert httpx.get(f"{worker}/").json() == {"status": "OK"}, "Faust's bare index, nothing more"
    # Faust's own views: table contents and the cluster's worker URLs, to anyone who could connect
    for path in (
        "/table/",
        "/table/control-state/",
        "/table/control-state/k/",
        "/table/idempotency/",
        "/router/",
        "/router/topics",
        "/router/control-state/",
        "/router/control-state/k/",
        "/graph/",
        "/performance/",
        "/assignment/",
    ):
        assert httpx.get(f"{worker}{path}").status_code == 404, path
