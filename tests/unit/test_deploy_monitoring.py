"""deploy/: the Grafana dashboard and the Prometheus alert rules and config.

Every metric their PromQL names must be one the API or the worker exposes (both serve
``app.observability.metrics.REGISTRY``, with the process, platform and GC collectors), so a
renamed metric fails here instead of leaving an empty panel or an alert that can never fire.
``promtool`` (Debian's ``prometheus`` package, scripts/system-deps.sh) checks the rules and the
config as Prometheus would load them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml  # PyYAML, from uvicorn[standard]

from app.observability import metrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "tocsin.json"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
CONFIG = DEPLOY / "prometheus" / "prometheus.yml"

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_GROUPINGS = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_WORDS = re.compile(r"(?<![\w$.])([A-Za-z_:][\w:]*)\b(\s*\()?")
_KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "inf", "nan"})
_SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("_count", "_sum", "_created"),
    "gauge": ("",),
    "info": ("_info",),
}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (functions, keywords and label names left out)."""
    text = _STRINGS.sub("", expr)
    text = _MATCHERS.sub(" ", text)
    text = _RANGES.sub(" ", text)
    text = _GROUPINGS.sub(" ", text)
    return {m.group(1) for m in _WORDS.finditer(text) if not m.group(2) and m.group(1).lower() not in _KEYWORDS}


def exposed_names() -> set[str]:
    """Every sample name the registry can expose, labelled metrics without children included."""
    names: set[str] = set()
    for family in metrics.REGISTRY.collect():
        names.update(family.name + suffix for suffix in _SUFFIXES.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return names


def dashboard_exprs(dashboard: dict[str, Any]) -> list[str]:
    return [t["expr"] for panel in dashboard["panels"] for t in panel.get("targets", [])]


def alert_exprs(rules: dict[str, Any]) -> list[str]:
    return [str(rule["expr"]) for group in rules["groups"] for rule in group["rules"]]


def test_the_name_parser_finds_metrics_and_only_metrics() -> None:
    expr = (
        "histogram_quantile(0.99, sum by (route, le) "
        '(rate(tocsin_x_bucket{code=~"5..", route!="a b"}[$__rate_interval])))'
        " / on (job) group_left(instance) max without (partition) (tocsin_y offset 5m) > bool 0"
        ' and process_resident_memory_bytes{job="w"}'
    )
    assert metric_names(expr) == {"tocsin_x_bucket", "tocsin_y", "process_resident_memory_bytes"}


def test_the_registry_has_the_collectors_and_build_info() -> None:
    names = exposed_names()
    for name in (
        "process_resident_memory_bytes",
        "process_cpu_seconds_total",
        "python_gc_objects_collected_total",
        "python_info",
        "tocsin_build_info",
        "tocsin_http_request_duration_seconds_bucket",
        "tocsin_consumer_lag",
    ):
        assert name in names


def test_the_dashboard_is_a_grafana_dashboard() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "tocsin"
    assert dashboard["title"]
    assert isinstance(dashboard["schemaVersion"], int)
    panels = dashboard["panels"]
    assert len(panels) >= 8
    assert len({p["id"] for p in panels}) == len(panels)
    for panel in panels:
        assert panel["type"] in {"timeseries", "table", "stat"}
        assert panel["title"]
        assert {"h", "w", "x", "y"} <= panel["gridPos"].keys()
        assert panel["targets"], panel["title"]
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert len(set(ref_ids)) == len(ref_ids)
        for target in panel["targets"]:
            assert target["datasource"]["type"] == "prometheus"
            assert metric_names(target["expr"]), target["expr"]
    datasource = dashboard["templating"]["list"][0]
    assert (datasource["name"], datasource["type"]) == ("datasource", "datasource")


def test_the_dashboard_covers_what_an_operator_watches() -> None:
    used = set().union(*map(metric_names, dashboard_exprs(json.loads(DASHBOARD.read_text()))))
    assert {
        "tocsin_publishes_total",
        "tocsin_http_request_duration_seconds_bucket",
        "tocsin_http_request_duration_seconds_count",
        "tocsin_consumer_lag",
        "tocsin_decisions_total",
        "tocsin_action_deliveries_total",
        "tocsin_dead_letters_total",
        "tocsin_token_exchanges_total",
        "process_resident_memory_bytes",
    } <= used


def test_every_metric_of_the_dashboard_and_the_alerts_is_exposed() -> None:
    exprs = dashboard_exprs(json.loads(DASHBOARD.read_text())) + alert_exprs(yaml.safe_load(ALERTS.read_text()))
    exposed = exposed_names()
    unknown = {(name, expr) for expr in exprs for name in metric_names(expr) if name not in exposed}
    assert not unknown, f"metrics neither the API nor the worker exposes: {sorted(unknown)}"


def test_the_alerts_cover_lag_dead_letters_deliveries_5xx_and_exchanges() -> None:
    rules = [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]
    used = {name for rule in rules for name in metric_names(str(rule["expr"]))}
    assert {
        "tocsin_consumer_lag",
        "tocsin_dead_letters_total",
        "tocsin_action_deliveries_total",
        "tocsin_http_request_duration_seconds_count",
        "tocsin_token_exchanges_total",
    } <= used
    for rule in rules:
        assert rule["alert"] and rule["labels"]["severity"] and rule["annotations"]["summary"]


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install promtool (Debian's prometheus package; scripts/system-deps.sh does)")
        pytest.skip("no promtool (apt-get install prometheus; scripts/system-deps.sh installs it)")
    return found


@pytest.mark.parametrize(("what", "path"), [("rules", ALERTS), ("config", CONFIG)])
def test_promtool_accepts(what: str, path: Path) -> None:
    done = subprocess.run(
        [_promtool(), "check", what, str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
