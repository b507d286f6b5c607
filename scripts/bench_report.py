"""``make bench-report``: the figures table of docs/benchmarks.md, generated from the last bench run.

``make bench`` writes every run's figures to bench-results/latest.json (a run of one section,
``--only NAME``, replaces that section only, with its own date and commit). This script renders
them as one table — each figure beside the baseline measured in the same run, its target and
its verdict — between the ``bench-report`` markers of docs/benchmarks.md, so the page's figures
are the file's and cannot drift from it; the dated history is the file's git history.

``python -m scripts.bench_report`` writes the table; ``--check`` fails when the page differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench-results" / "latest.json"
PAGE = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- bench-report:start -->", "<!-- bench-report:end -->"

Row = tuple[str, str, str, str, str]  # figure, measured, same-run baseline, target, verdict


def _verdict(met: bool | None) -> str:
    return "n/a (errors)" if met is None else ("met" if met else "**not met**")


def _n(value: float | None, digits: int = 0, unit: str = "") -> str:
    return "-" if value is None else f"{value:,.{digits}f}{unit}"


def _publish(fig: dict[str, Any]) -> Iterator[Row]:
    runs = fig["runs"]

    def median_rps(kind: str) -> str:
        """Each run's publishes/s, in order (the ratios are of their medians)."""
        values = [r["rps"] for r in runs if r["kind"] == kind and r.get("valid")]
        return "/".join(f"{v:,.0f}" for v in values) if values else "-"

    def broker_us(kind: str) -> str:
        """The broker's CPU per publish in each run of ``kind`` (µs): what the guarantee costs it."""
        values = [
            1e4 * r["cpu_pct"]["broker"] / r["rps"]
            for r in runs
            if r["kind"] == kind and r.get("valid") and r.get("cpu_pct", {}).get("broker") is not None
        ]
        return "/".join(f"{v:,.0f}" for v in values) if values else "-"

    g, n = fig["guarantee"], fig["naive"]
    met = (
        None
        if g["ratio"] is None or g["p99_ms"] is None
        else g["ratio"] >= g["target"] and g["p99_ms"] <= g["target_p99_ms"]
    )
    yield (
        "publish, guarantee on ÷ off",
        f"{g['ratio']} x ({median_rps('on')} publishes/s, p99 {g['p99_ms']} ms; broker {broker_us('on')} µs a publish)",
        f"guarantee off: {median_rps('off')} publishes/s; broker {broker_us('off')} µs a publish",
        f"≥ {g['target']} x, p99 ≤ {g['target_p99_ms']:g} ms",
        _verdict(met),
    )
    yield (
        "publish ÷ naive FastAPI + aiokafka ingress",
        f"{n['ratio']} x",
        f"naive: {median_rps('naive')} publishes/s",
        f"≥ {n['target']} x",
        _verdict(None if n["ratio"] is None else n["ratio"] >= n["target"]),
    )
    b = fig.get("batch")
    if b:
        cpu, eps, target = b["cpu_us_per_event"], b["events_per_s"], b["targets"]["cpu_batch_raw"]
        ratio = b.get("ratio_cpu_batch_raw")
        yield (
            "batch publish, API + broker CPU per event ÷ bare aiokafka",
            f"{ratio} x ({_n(cpu['batch'], 1)} µs; {_n(eps['batch'])} events/s)",
            f"bare aiokafka batches: {_n(cpu['raw_aiokafka'], 1)} µs; {_n(eps['raw_aiokafka'])} events/s",
            f"≤ {target} x",
            _verdict(None if ratio is None else ratio <= target),
        )


def _control(fig: dict[str, Any]) -> Iterator[Row]:
    def rate(mode: str) -> str:
        rates = [r[mode]["rate"] for r in fig["rounds"] if mode in r]
        return "-" if not rates else "/".join(f"{x:,.0f}" for x in rates) + " events/s"

    def cpu(mode: str) -> str:
        """The agent process's own CPU per measured event (µs), each round."""
        values = [1e6 * r[mode]["cpu_s"] / r[mode]["events"] for r in fig["rounds"] if "cpu_s" in r.get(mode, {})]
        return "" if not values else f", {'/'.join(f'{v:,.0f}' for v in values)} µs CPU an event"

    quix = fig.get("ratio_control_to_quixstreams")
    if quix is not None or "quix_target" in fig:
        yield (
            "control agent ÷ quixstreams peer",
            f"{_n(quix, 2)} x (control {rate('control')}{cpu('control')}; "
            f"Faust consume-only {rate('consume')}{cpu('consume')})",
            f"quixstreams StreamingDataFrame + RocksDB, same topic: {rate('quixstreams')}{cpu('quixstreams')}",
            f"≥ {fig.get('quix_target', 1.0)} x",
            _verdict(None if quix is None else quix >= fig.get("quix_target", 1.0)),
        )
    ratio = fig["ratio_control_to_passthrough"]
    yield (
        "control agent ÷ Faust pass-through",
        f"{ratio:.2f} x",
        f"Faust agent, one send per event: {rate('passthrough')}",
        f"≥ {fig['target']} x",
        _verdict(ratio >= fig["target"]),
    )


def _webhook(fig: dict[str, Any]) -> Iterator[Row]:
    runs = [r for r in fig["runs"] if not r.get("slow")]
    each = ", ".join(f"{r['p50_s'] * 1e3:.0f}/{r['p99_s'] * 1e3:.0f}" for r in runs)
    yield (
        f"publish → webhook delivered, p50/p99 ms, {len(runs)} runs in a row",
        each,
        f"bare POST: p50 {fig['baseline_p50_s'] * 1e3:.1f} ms",
        f"p50 ≤ {fig['target_p50_s'] * 1e3:.0f}, p99 ≤ {fig['target_p99_s'] * 1e3:.0f} ms, every run",
        _verdict(all(r["met"] for r in runs)),
    )
    if "cpu_per_event_s" not in fig:  # results of a release before these figures
        return
    per = fig["cpu_per_event_s"]
    yield (
        "worker CPU per event, publish → decided → webhook delivered",
        f"{per * 1e6:.0f} µs",
        f"bare POST: p50 {fig['baseline_p50_s'] * 1e3:.1f} ms",
        f"≤ {fig['cpu_target_s'] * 1e6:.0f} µs",
        _verdict(per <= fig["cpu_target_s"]),
    )
    high = fig["high"]
    yield (
        f"publish → webhook delivered at {high['accepted'] // max(1, fig['seconds'])}/s, p50/p99 ms",
        f"{high['p50_s'] * 1e3:.0f}/{high['p99_s'] * 1e3:.0f}, {high['missing']} missing",
        f"bare POST: p50 {fig['baseline_p50_s'] * 1e3:.1f} ms",
        f"p99 ≤ {fig['high_target_p99_s'] * 1e3:.0f} ms, nothing left behind",
        _verdict(high["met"]),
    )
    soak = fig["soak"]
    cpu, rss = soak["cpu_per_event_s"], soak["rss_mb"]
    yield (
        f"soak {soak['rate']}/s for {soak['seconds'] // 60} min: CPU µs per event, memory MB (2nd → last minute)",
        f"{cpu[1] * 1e6:.0f} → {cpu[-1] * 1e6:.0f} µs; {rss[1]:.0f} → {rss[-1]:.0f} MB" if len(cpu) > 1 else "-",
        f"the {fig['rate']}/s runs: {per * 1e6:.0f} µs",
        "CPU ≤ 1.1 x the 2nd minute and ≤ 2 x the runs'; memory flat",
        _verdict(soak["met"]),
    )


def _recovery(fig: dict[str, Any]) -> Iterator[Row]:
    seconds, target = fig["recovery_seconds_per_100k_keys"], fig.get("target_s", 2.0)
    cpu = fig["rebuilt"].get("cpu_s")
    spent = f" (worker CPU {cpu['worker']:.1f} s, broker {cpu['broker']:.1f} s, start to ready)" if cpu else ""
    yield (
        "recovery of 100,000 keys",
        f"{seconds:.1f} s{spent}",
        f"restart on an intact data directory: ready in {fig['baseline']['ready_seconds']:.1f} s",
        f"≤ {target:g} s",
        _verdict(seconds <= target),
    )


def _iam(fig: dict[str, Any]) -> Iterator[Row]:
    lookup = fig["dict_lookup"]["p50_us"]
    for label, key in (
        ("authorization, 50 bindings", "authz_50_bindings"),
        ("authentication, warm cache", "token_auth_warm"),
    ):
        f = fig[key]
        yield (
            label,
            f"{f['p50_us']:.2f} µs",
            f"dict lookup {lookup:.3f} µs",
            f"≤ {f['target_us']:g} µs",
            _verdict(f["met"]),
        )


def _memory(fig: dict[str, Any]) -> Iterator[Row]:
    baseline = fig.get("baseline") or {}
    per_million = fig["growth_mb_per_million"]
    yield (
        "worker RSS per 1,000,000 partition keys",
        f"+{per_million:.0f} MB",
        f"bounds lifted: +{baseline.get('growth_mb_per_million', 0):.0f} MB" if baseline else "-",
        f"≤ {fig['target_mb']:g} MB",
        _verdict(per_million <= fig["target_mb"]),
    )


def _formats(fig: dict[str, Any]) -> Iterator[Row]:
    eps = fig["events_per_s"]
    ratio = fig.get("ratio_cloudevents_native")
    yield (
        "CloudEvents binary-mode publish",
        f"{_n(eps.get('cloudevents_binary'))} events/s ({_n(ratio, 2)} x native)",
        f"native publish: {_n(eps.get('native'))} events/s",
        f"≥ {fig['target_cloudevents_native']:g} x native",
        _verdict(fig.get("met")),
    )
    yield (
        f"Alertmanager receiver ({fig['alerts_per_notification']} alerts a notification)",
        f"{_n(eps.get('alertmanager'))} alerts/s ({_n(fig.get('ratio_alertmanager_batch'), 2)} x batch)",
        f"batch publish of {fig['alerts_per_notification']}: {_n(eps.get('batch'))} events/s",
        "-",
        "-",
    )


RENDERERS: dict[str, Callable[[dict[str, Any]], Iterator[Row]]] = {
    "publish": _publish,
    "formats": _formats,
    "control": _control,
    "webhook": _webhook,
    "recovery": _recovery,
    "iam": _iam,
    "memory": _memory,
}


def render(report: dict[str, Any]) -> str:
    lines = [
        START,
        "<!-- generated by `make bench-report` from bench-results/latest.json: edit neither by hand -->",
        "",
        "| figure | measured | baseline (same run) | target | verdict | run |",
        "|---|---|---|---|---|---|",
    ]
    sections = report.get("sections", {})
    for name, renderer in RENDERERS.items():
        fig = sections.get(name)
        if fig is None:
            lines.append(f"| {name} | not in bench-results/latest.json | - | - | - | - |")
            continue
        when = fig.get("_run", {}).get("when", report.get("when", "?"))
        commit = fig.get("_run", {}).get("commit") or report.get("commit") or "?"
        load = fig.get("_run", {}).get("loadavg")
        run = f"{when[:16].replace('T', ' ')} `{commit[:7]}`" + (f", load {load[0]}-{load[1]}" if load else "")
        for row in renderer(fig):
            lines.append("| " + " | ".join(row) + f" | {run} |")
    machine = report.get("machine", {})
    lines += [
        "",
        f"Machine: {machine.get('cpus', '?')} CPUs, Python {machine.get('python', '?')}; broker, API, worker "
        "and load generator share its cores; load = the 1-minute load average at the section's start and end "
        "(above 2, other work was queued for the same cores).",
        END,
    ]
    return "\n".join(lines)


def updated(page: str, table: str) -> str:
    if START not in page or END not in page:
        raise SystemExit(f"{PAGE.relative_to(ROOT)} has no {START} … {END} markers")
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + table + tail


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="make bench-report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--check", action="store_true", help="fail when the page's table differs from the results")
    args = parser.parse_args(argv)
    report = json.loads(args.results.read_text())
    page = PAGE.read_text()
    new = updated(page, render(report))
    if args.check:
        if new != page:
            sys.exit(f"{PAGE.relative_to(ROOT)}'s figures differ from {args.results}: run make bench-report")
        return
    PAGE.write_text(new)
    print(f"wrote the figures table of {PAGE.relative_to(ROOT)} from {args.results}")


if __name__ == "__main__":
    main()
