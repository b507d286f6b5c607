"""``make bench``: figures and ratios against baselines measured in the same run.

Sections (``SECTIONS``; ``--only NAME`` runs one) return a dict of figures; the run prints a
table and one ``BENCH_JSON {...}`` line, saved to bench-results/latest.json. ``publish`` drives
the real stack over HTTP keep-alive with wrk, the publish guarantee on and off, next to the naive
FastAPI + aiokafka ingress on the same broker and topic (tests/bench/naive_app.py); ``iam`` and
``federation`` time the hot paths in-process;
``tracing`` measures the publish with tracing off and on (exporting to a local OTLP receiver).
A run of one section (``--only``) replaces that section of the saved results, with its own date
and commit; ``make bench-report`` renders docs/benchmarks.md's figures table from that file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psutil

from devstack.kafka import LocalKafka
from devstack.ports import free_port
from tests.bench import trace_ab
from tests.bench.batch_bench import CONNECTIONS as BATCH_CONNECTIONS
from tests.bench.batch_bench import batch_figures, raw_producer_rate, render_batch, write_batch_body
from tests.bench.control_bench import render_control, run_control_section
from tests.bench.federation_micro import render_federation, section_federation
from tests.bench.formats_bench import (
    BATCH_RUNS,
    RUNS,
    formats_figures,
    lua_env,
    render_formats,
    write_alertmanager_body,
    write_small_batch_body,
)
from tests.bench.iam_micro import render_iam, section_iam
from tests.bench.memory_bench import render_memory, run_memory_section
from tests.bench.recovery_bench import render_recovery, run_recovery_section
from tests.bench.webhook_bench import render_webhook, run_webhook_section
from tests.bench.webhook_client_bench import render_webhook_client, run_webhook_client_section
from tests.support.otlp import otlp_receiver
from tests.support.stack import ROOT, Stack, wait_for

LUA = Path(__file__).with_name("publish.lua")
RESULTS = ROOT / "bench-results" / "latest.json"
BODY = (
    '{"status":"ACTUAL","data":{"magnitude":5.5,"region":"kanto"},'
    '"event":{"id":"bench","name":"bench event"},"event_control":{"partition_key":"site-1"}}'
)
NOTES = [
    "the topic has no workflows, but the worker consumes every publish and records its trace on the same cores",
    "broker, API, worker, the naive ingress and wrk share this machine's cores",
    "naive = FastAPI + pydantic + aiokafka send_and_wait (acks=all, idempotent; no auth, no transaction), "
    "the same records to the same topic",
]


class BenchError(Exception):
    """The benchmark cannot run or produced no valid figure."""


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


class Bench:
    """Settings plus the broker and the stack, started on first use, stopped by ``cleanup``."""

    def __init__(self, args: argparse.Namespace, work_dir: Path) -> None:
        self.args = args
        self.work_dir = work_dir
        self.cleanup = contextlib.ExitStack()
        self._kafka: LocalKafka | None = None
        self._stack: Stack | None = None

    def kafka(self) -> LocalKafka:
        if self._kafka is None:
            progress("starting the Kafka broker")
            kafka = LocalKafka(self.work_dir / "kafka", progress=progress)
            self.cleanup.callback(kafka.stop)
            self.cleanup.callback(progress, "stopping the broker")
            kafka.start()
            self._kafka = kafka
        return self._kafka

    def stack(self) -> Stack:
        if self._stack is None:
            kafka = self.kafka()
            progress("starting the stack (bootstrap an organization, API, worker)")
            # The bench measures throughput on one account and topic: the per-account publish limit
            # (1,000/s by default) would cap it, so it is lifted here (its check still runs).
            unlimited = {"TOCSIN_PUBLISH_RATE_PER_SECOND": "1e9", "TOCSIN_PUBLISH_BURST": "1000000000"}
            stack = Stack(self.work_dir / "var", kafka.bootstrap, extra_env=unlimited)
            self.cleanup.callback(stack.stop)
            self.cleanup.callback(progress, "stopping the stack (API, worker)")
            stack.start()
            self._stack = stack
        return self._stack

    def log_tails(self) -> str:
        logs = [self._stack.var_dir / "api.log", *self._stack.worker_logs] if self._stack else []
        return "\n".join(f"--- {log.name}\n{Stack.tail(log, 20)}" for log in logs)


def ensure_wrk() -> str:
    if found := shutil.which("wrk"):
        return found
    if os.geteuid() != 0:
        raise BenchError("wrk is not installed: apt-get install -y wrk (Debian package 'wrk')")
    progress("wrk not found: installing the Debian package (apt-get install -y wrk)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "wrk"]
    if subprocess.run(install, env=env, check=False).returncode != 0:
        progress("apt-get install failed; running apt-get update, then installing again")
        subprocess.run(["apt-get", "update", "-q"], env=env, check=True)
        subprocess.run(install, env=env, check=True)
    if not (found := shutil.which("wrk")):
        raise BenchError("wrk is still not on PATH after apt-get install")
    return found


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of a process and its children (None if it is gone)."""
    try:
        procs = [proc := psutil.Process(pid), *proc.children(recursive=True)] if pid is not None else []
    except psutil.NoSuchProcess:
        return None
    total = 0.0
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += sum(p.cpu_times()[:2])  # user + system
    return total if procs else None


def machine_seconds() -> tuple[float, float]:
    """(busy, stolen) CPU seconds of the whole machine; steal is time the hypervisor took."""
    t = psutil.cpu_times()
    busy = t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)
    return float(busy), float(getattr(t, "steal", 0.0))


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 10) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def start_naive(bench: Bench, stack: Stack, topic_id: str) -> tuple[subprocess.Popen[bytes], str]:
    """The naive ingress (tests/bench/naive_app.py) on the same broker and publish topic."""
    port = free_port()
    log = bench.work_dir / "naive.log"
    progress(f"starting the naive FastAPI + aiokafka ingress on 127.0.0.1:{port} (uvloop, httptools, 1 worker)")
    env = {
        **os.environ,
        "BENCH_NAIVE_BOOTSTRAP": bench.kafka().bootstrap,
        "BENCH_NAIVE_TOPIC": stack.env["TOCSIN_TOPIC_PREFIX"] + "publish",
        "BENCH_NAIVE_ORG": stack.org,
        "BENCH_NAIVE_TOPIC_ID": topic_id,
    }
    with open(log, "ab") as out:
        cmd = [sys.executable, "-m", "tests.bench.naive_app", "--port", str(port)]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    bench.cleanup.callback(stop_process, proc)
    url = f"http://127.0.0.1:{port}/publish"

    def ready() -> bool:
        if proc.poll() is not None:
            raise BenchError(f"the naive ingress exited: {Stack.tail(log)}")
        try:
            return check_post(url, "") == 202
        except httpx.HTTPError:
            return False

    wait_for(ready, 30, "the naive ingress")
    return proc, url


def restart_api(stack: Stack, env: dict[str, str] | None, url: str, authorization: str) -> None:
    """The API again with ``env`` over the stack's (None: the stack's own), once it accepts a publish."""
    stack.stop_api()
    stack.api = stack._spawn("api", stack.var_dir / "api.log", env=env)

    def accepted() -> bool:
        try:
            return check_post(url, authorization) == 202
        except httpx.HTTPError:
            return False  # not listening yet

    wait_for(accepted, 120, "the restarted API")


def headers(authorization: str) -> dict[str, str]:
    return {"Content-Type": "application/json", **({"Authorization": authorization} if authorization else {})}


def check_post(url: str, authorization: str) -> int:
    return httpx.post(url, content=BODY, headers=headers(authorization), timeout=10).status_code


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}


def parse_wrk(text: str) -> dict[str, Any]:
    """Figures from wrk's ``--latency`` report and the Lua script's BENCH_STATUS line."""
    out: dict[str, Any] = {}
    if m := re.search(r"Requests/sec:\s+([\d.]+)", text):
        out["rps"] = float(m.group(1))
    if m := re.search(r"(\d+) requests in ([\d.]+)(\w+)", text):
        out["requests"] = int(m.group(1))
    for pct, value, unit in re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m|h)\s*$", text, re.MULTILINE):
        out[f"p{pct}_ms"] = round(float(value) * _UNITS[unit], 3)
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    out["socket_errors"] = sum(int(g) for g in socket.groups()) if socket else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    out["wrk_non2xx"] = int(m.group(1)) if m else 0
    if m := re.search(r"BENCH_STATUS total=(\d+) ok=(\d+) non2xx=(\d+) first_bad=(\d+)", text):
        out["responses"], out["ok"], out["non2xx"], bad = (int(g) for g in m.groups())
        out["first_bad_status"] = bad or None
    else:
        raise BenchError(f"wrk's output has no BENCH_STATUS line (is {LUA.name} in use?):\n{text}")
    out["errors"] = max(out["non2xx"], out["wrk_non2xx"]) + out["socket_errors"]
    return out


Watch = dict[str, int | None]


def run_wrk(
    bench: Bench,
    url: str,
    authorization: str,
    duration: float,
    watch: Watch,
    body_file: Path | None = None,
    connections: int | None = None,
    delay_ms: float = 0,
    lua_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One wrk process; CPU% of wrk and of every watched pid over its lifetime. ``body_file``: post
    that file's content instead of BODY (a batch); ``delay_ms``: each connection pauses that long
    after each response (a steady load below saturation); ``lua_env``: more of publish.lua's settings
    (BENCH_BODY, BENCH_HEADERS, BENCH_UNIQUE)."""
    args = bench.args
    opts = f"-t {args.threads} -c {connections or args.connections} -d {duration:g}s --latency --timeout 10s -s {LUA}"
    cmd = [ensure_wrk(), *opts.split(), url]
    env = {**os.environ, "BENCH_BODY": BODY, "BENCH_AUTHORIZATION": authorization, "BENCH_DELAY_MS": f"{delay_ms:g}"}
    env.update(lua_env or {})
    if body_file is not None:
        env["BENCH_BODY_FILE"] = str(body_file)
    before = {name: cpu_seconds(pid) for name, pid in watch.items()}
    machine_before = machine_seconds()
    with tempfile.TemporaryFile() as out:
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            wrk_before = cpu_seconds(proc.pid) or 0.0
            deadline = started + duration + 60
            # wait for the exit without reaping, so the zombie's CPU times can still be read
            while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
                if time.monotonic() > deadline:
                    raise BenchError(f"wrk did not finish within {duration + 60:.0f}s")
                time.sleep(0.02)
            elapsed = time.monotonic() - started
            wrk_after = cpu_seconds(proc.pid)
            after = {name: cpu_seconds(pid) for name, pid in watch.items()}
            machine_after = machine_seconds()
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode != 0:
        raise BenchError(f"wrk exited with {proc.returncode}:\n{text}")
    figures = parse_wrk(text)

    def pct(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else round((b - a) / elapsed * 100, 1)

    cpu = {name: pct(before[name], after[name]) for name in watch}
    cpu["wrk"] = pct(wrk_before, wrk_after)
    cpu["machine"] = pct(machine_before[0], machine_after[0])
    cpu["steal"] = pct(machine_before[1], machine_after[1])
    known = {pid: cpu[name] or 0.0 for name, pid in watch.items()}  # "server" is also "api" in the publish run
    cpu["other"] = round((cpu["machine"] or 0.0) - sum(known.values()) - (cpu["wrk"] or 0.0), 1)
    figures.update(cpu_pct=cpu, elapsed_s=round(elapsed, 2))
    return figures


def measure(
    bench: Bench,
    name: str,
    url: str,
    authorization: str,
    watch: Watch,
    body_file: Path | None = None,
    connections: int | None = None,
    delay_ms: float = 0,
    lua_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    args = bench.args
    progress(f"{name}: warm-up {args.warmup:g}s ({connections or args.connections} connections, {args.threads} thread)")
    warm = run_wrk(bench, url, authorization, args.warmup, watch, body_file, connections, delay_ms, lua_env)
    progress(f"{name}: measuring {args.duration:g}s")
    figures = run_wrk(bench, url, authorization, args.duration, watch, body_file, connections, delay_ms, lua_env)
    figures.update(
        warmup_errors=warm["errors"],
        warmup_requests=warm.get("requests", 0),
        valid=not figures["errors"] and bool(figures.get("rps")),
    )
    if figures["errors"]:
        progress(f"{name}: {figures['errors']} errors (first non-2xx status: {figures['first_bad_status']})")
    else:
        progress(f"{name}: {figures['rps']:.0f} req/s, p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms")
    return figures


# The publish section's runs, in order (each against the same broker, topic and running worker):
# the API with the publish guarantee on (the default), off, and the naive ingress; three times, so a slow
# moment of this shared machine lands on both sides. Each ratio is of the medians of each kind's runs
# (TOCSIN_BENCH_PUBLISH_RUNS: another order, an experiment).
PUBLISH_RUNS = tuple(os.environ.get("TOCSIN_BENCH_PUBLISH_RUNS", "on,off,naive,on,off,naive,on,off,naive").split(","))
# A broker started for the bench compiles its transaction paths for about a minute (its C2 compiler
# threads took more CPU than its request handlers in a first transactional run; the broker's CPU per
# guarantee-on publish fell from 1,825 to 201 µs over the first ten runs): those seconds of guarantee-on
# publishes before the first measured run, discarded. A broker in service has long been warm.
PUBLISH_BROKER_WARMUP_S = float(os.environ.get("TOCSIN_BENCH_PUBLISH_BROKER_WARMUP", "60"))
GUARANTEE_TARGET, GUARANTEE_P99_MS = 0.9, 50.0  # guarantee on ÷ off (issue 31)
NAIVE_TARGET = 1.0  # publish ÷ the naive ingress


def section_publish(bench: Bench) -> dict[str, Any]:
    ensure_wrk()
    stack = bench.stack()
    with stack.client() as client:
        resp = client.post("workflow_topics", json={"key": "bench"})
        if resp.status_code not in (200, 201):
            raise BenchError(f"creating the workflow topic failed: {resp.status_code} {resp.text}")
        topic_id = client.get("workflow_topics/bench").json()["id"]
        authorization = f"Bearer {stack.credentials['access_token']}"
        publish_url = f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/bench/publish"
        resp = httpx.post(publish_url, content=BODY, timeout=30, headers=headers(authorization))
        if resp.status_code != 202:
            raise BenchError(f"the check publish answered {resp.status_code} {resp.text}")
        event_id = resp.json()["id"]
        progress("waiting for the worker to trace the check publish")
        try:
            wait_for(lambda: client.get(f"events/{event_id}").status_code == 200, 120, "the worker's trace")
            worker_ready = True
        except AssertionError as exc:
            progress(f"warning: {exc}; measuring anyway")
            worker_ready = False
    naive_proc, naive_url = start_naive(bench, stack, topic_id)
    if PUBLISH_BROKER_WARMUP_S > 0:
        assert stack.api is not None
        progress(f"publish: warming the broker's transaction paths for {PUBLISH_BROKER_WARMUP_S:g}s (discarded)")
        watch0: Watch = {"api": stack.api.pid, "worker": stack.workers[0].pid, "broker": bench.kafka().pid}
        run_wrk(bench, publish_url, authorization, PUBLISH_BROKER_WARMUP_S, watch0)
    envs = {"on": None, "off": {"TOCSIN_PUBLISH_TRANSACTIONS": "false"}}
    runs: list[dict[str, Any]] = []
    current = "on"
    for i, kind in enumerate(PUBLISH_RUNS):
        assert stack.api is not None
        watch: Watch = {"api": stack.api.pid, "worker": stack.workers[0].pid, "broker": bench.kafka().pid}
        name = f"publish {kind} ({i + 1}/{len(PUBLISH_RUNS)})"
        if kind == "naive":
            run = measure(bench, name, naive_url, "", {"server": naive_proc.pid, "naive": naive_proc.pid, **watch})
        else:
            if kind != current:
                restart_api(stack, envs[kind], publish_url, authorization)
                current = kind
                assert stack.api is not None
                watch["api"] = stack.api.pid
            before = transactions_committed(stack)
            run = measure(bench, name, publish_url, authorization, {"server": stack.api.pid, **watch})
            if kind == "on" and run.get("requests") and before is not None:
                # the warm-up's and the measured run's together: publishes per transaction, not per second
                committed = (transactions_committed(stack) or 0) - before
                total = run["requests"] + run.get("warmup_requests", 0)
                run["transactions"] = committed
                run["publishes_per_transaction"] = round(total / committed, 1) if committed else None
                progress(f"{name}: {committed} transactions, {run['publishes_per_transaction']} publishes each")
        run["kind"] = kind
        runs.append(run)
    progress("stopping the naive ingress")
    stop_process(naive_proc)
    if current != "on":
        restart_api(stack, None, publish_url, authorization)
    assert stack.api is not None
    watch = {"server": stack.api.pid, "api": stack.api.pid, "worker": stack.workers[0].pid, "broker": bench.kafka().pid}
    on = [r for r in runs if r["kind"] == "on"]
    batch = measure_batch(bench, stack, on[-1], authorization, watch)
    errors = sum(r["errors"] for r in runs) + batch["batch"]["errors"]

    def ratio(a: str, b: str) -> float | None:
        ra, rb = ([r for r in runs if r["kind"] == kind] for kind in (a, b))
        if not ra or not rb or not all(r["valid"] for r in (*ra, *rb)):
            return None
        return round(statistics.median(r["rps"] for r in ra) / statistics.median(r["rps"] for r in rb), 3)

    p99_on = max(r["p99_ms"] for r in on) if all(r["valid"] for r in on) else None
    return {
        "runs": runs,
        "guarantee": {
            "ratio": ratio("on", "off"),
            "target": GUARANTEE_TARGET,
            "p99_ms": p99_on,
            "target_p99_ms": GUARANTEE_P99_MS,
            "window_ms": stack_window_ms(stack),
        },
        "naive": {"ratio": ratio("on", "naive"), "target": NAIVE_TARGET},
        "batch": batch,
        "worker_ready": worker_ready,
        "errors": errors,
        "notes": NOTES,
    }


def transactions_committed(stack: Stack) -> float | None:
    """The API's ``tocsin_publish_transactions_total{outcome="committed"}`` (None if unreadable)."""
    try:
        text = httpx.get(f"{stack.base_url}/metrics", timeout=10).text
    except httpx.HTTPError:
        return None
    m = re.search(r'^tocsin_publish_transactions_total\{outcome="committed"\} ([\d.e+]+)$', text, re.MULTILINE)
    return float(m.group(1)) if m else 0.0


def stack_window_ms(stack: Stack) -> float:
    from app.settings.transactions import PublishTransactions

    window = stack.env.get("TOCSIN_PUBLISH_TRANSACTION_WINDOW_MS")
    return float(window) if window else PublishTransactions.model_fields["publish_transaction_window_ms"].default


def measure_batch(
    bench: Bench, stack: Stack, single: dict[str, Any], authorization: str, watch: Watch
) -> dict[str, Any]:
    """Batch publish events/s beside the single publish's (``single``, this run) and a raw aiokafka
    producer's on the same topic (tests/bench/batch_bench.py)."""
    with stack.client() as client:
        topic_id = client.get("workflow_topics/bench").json()["id"]
    body_file = write_batch_body(BODY, bench.work_dir / "batch.json")
    batch_url = f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/bench/publish:batch"
    batch = measure(bench, "publish:batch", batch_url, authorization, watch, body_file, BATCH_CONNECTIONS)
    topic = stack.env["TOCSIN_TOPIC_PREFIX"] + "publish"
    raw = {}
    broker = bench.kafka().pid
    for batches, how in ((True, "record batches"), (False, "one send a record")):
        progress(f"raw aiokafka ({how}): the same records to {topic} for {bench.args.duration:g}s")
        args = (bench.kafka().bootstrap, topic, BODY, stack.org, topic_id, bench.args.duration)
        broker_before, own_before = cpu_seconds(broker), time.process_time()
        raw[batches] = raw_producer_rate(*args, batches=batches)
        broker_after, own_after = cpu_seconds(broker), time.process_time()
        if broker_before is not None and broker_after is not None:
            raw[batches]["cpu_s"] = {
                "producer": round(own_after - own_before, 3),
                "broker": round(broker_after - broker_before, 3),
            }
        progress(f"raw aiokafka ({how}): {raw[batches]['events_per_s']:.0f} records/s")
    return batch_figures(single, batch, raw[True], raw[False])


def us_per_request(run: dict[str, Any], who: str) -> float | None:
    """CPU microseconds of process ``who`` per request of a wrk run (from its CPU% over the run)."""
    pct = run.get("cpu_pct", {}).get(who)
    if pct is None or not run.get("requests"):
        return None
    return round(pct / 100 * run["elapsed_s"] / run["requests"] * 1e6)


def verdict(met: bool | None) -> str:
    return "n/a (a run had errors)" if met is None else ("met" if met else "NOT met")


def render_publish(fig: dict[str, Any]) -> list[str]:
    runs = fig["runs"]

    def cell(run: dict[str, Any], key: str) -> str:
        if not run["valid"] and key in ("rps", "p50_ms", "p99_ms"):
            return "ERRORS"
        value = run.get(key) if "." not in key else run["cpu_pct"].get(key.split(".", 1)[1])
        return "-" if value is None else (f"{value:,.0f}" if key == "rps" else f"{value}")

    rows = [
        ("publishes/s (req/s)", "rps"),
        ("p50 latency (ms)", "p50_ms"),
        ("p99 latency (ms)", "p99_ms"),
        ("errors (non-2xx + socket)", "errors"),
        ("CPU% server under test", "cpu.server"),
        ("CPU% wrk (load generator)", "cpu.wrk"),
        ("CPU% kafka broker", "cpu.broker"),
        ("CPU% tocsin worker", "cpu.worker"),
        ("CPU% whole machine", "cpu.machine"),
        ("CPU% others (+-5 noise)", "cpu.other"),
        ("CPU% stolen by the hypervisor", "cpu.steal"),
    ]
    width = max(len(label) for label, _ in rows) + 2
    names = {"on": "on", "off": "off", "naive": "naive"}
    lines = [f"{'':<{width}}" + "".join(f"{names[r['kind']]:>10}" for r in runs)]
    lines += [f"{label:<{width}}" + "".join(f"{cell(r, key):>10}" for r in runs) for label, key in rows]
    for label, who in (("server CPU us/publish", "server"), ("broker CPU us/publish", "broker")):
        per = [us_per_request(r, who) for r in runs]
        lines.append(f"{label:<{width}}" + "".join(f"{'-' if v is None else v:>10}" for v in per))
    per_txn = [str(r.get("publishes_per_transaction", "-")) if r["kind"] == "on" else "" for r in runs]
    lines.append(f"{'publishes per transaction':<{width}}" + "".join(f"{v:>10}" for v in per_txn))
    cores = psutil.cpu_count() or 1
    lines.append(
        f"(on = publish guarantee on, the default; off = TOCSIN_PUBLISH_TRANSACTIONS=false; CPU% up to {cores * 100}%)"
    )
    g = fig["guarantee"]
    ratio, p99 = g["ratio"], g["p99_ms"]
    met = None if ratio is None or p99 is None else ratio >= g["target"] and p99 <= g["target_p99_ms"]
    lines.append(
        f"publish guarantee on / off: {ratio} x publishes/s (medians of the runs), p99 on {p99} ms "
        f"(window {g['window_ms']:g} ms; target >= {g['target']} x and p99 <= {g['target_p99_ms']:g} ms): "
        f"{verdict(met)}"
    )
    n = fig["naive"]
    met = None if n["ratio"] is None else n["ratio"] >= n["target"]
    lines.append(f"publish (guarantee on) / naive ingress: {n['ratio']} x (target >= {n['target']}): {verdict(met)}")
    lines += [f"note: {note}" for note in fig["notes"]]
    if "batch" in fig:
        lines += render_batch(fig["batch"])
    return lines


@dataclass(frozen=True)
class Section:
    name: str
    run: Callable[[Bench], dict[str, Any]]
    render: Callable[[dict[str, Any]], list[str]]


# In-process sections first: the publish section leaves the worker draining its backlog.
SECTIONS = [Section("iam", section_iam, render_iam), Section("federation", section_federation, render_federation)]
SECTIONS.append(Section("publish", section_publish, render_publish))


def section_control(bench: Bench) -> dict[str, Any]:
    kafka = bench.kafka()
    return run_control_section(kafka.bootstrap, bench.work_dir, kafka.pid)


# Before publish: that section leaves its worker draining a backlog on the same cores.
SECTIONS.insert(2, Section("control", section_control, render_control))


def section_webhook(bench: Bench) -> dict[str, Any]:
    # the latency histogram beside the JSON result (bench-results/webhook-latency.png by default)
    return run_webhook_section(
        bench.kafka().bootstrap, bench.work_dir, bench.args.output.parent / "webhook-latency.png"
    )


SECTIONS.insert(3, Section("webhook", section_webhook, render_webhook))


def section_webhook_client(bench: Bench) -> dict[str, Any]:
    return run_webhook_client_section(bench.work_dir)


# In-process like iam and federation: before the sections that leave workers draining backlogs.
SECTIONS.insert(2, Section("webhook_client", section_webhook_client, render_webhook_client))


# The tracing section's runs, in order: every "on" run between two "off" runs, whose mean is its
# baseline (what drifts over the section, the broker's own warm-up first, lands on both sides).
TRACING_RUNS = ("off", "on", "off", "on 10%", "off", "on", "off", "on", "off")
# Then at a steady load below saturation (each connection pauses TRACING_PACE_MS after each
# response: about half the saturated rate here), where the API's CPU per publish is its own work:
# at saturation the traced runs reach more publishes/s, the API takes more of the two cores from
# the worker and the broker, and its CPU per publish moves with that share, not only with tracing.
TRACING_PACED_RUNS = ("paced off", "paced on", "paced off", "paced on", "paced off", "paced on", "paced off")
# Then API processes whose publishes are traced and not traced in phases that alternate every
# TRACING_AB_PERIOD_S (tests/bench/trace_ab.py): the cost inside one process, free of the drift and
# of the differences between processes that the runs above compare across; at the paced load, then
# at saturation (each wrk connection sends as soon as it has its answer).
TRACING_AB_PROCESSES = 3  # per load
TRACING_AB_PERIOD_S = 2.0
TRACING_AB_SECONDS = 60.0
TRACING_PACE_MS = 8.0
TRACING_AB_LOADS = (("paced", TRACING_PACE_MS), ("saturated", 0.0))  # wrk's pause after each response, ms
TRACING_TARGET = 0.10  # issue 19: tracing on costs at most 10 %
TRACING_SETTLE_S = 15.0  # of publishes before the first run: the broker's warm-up is not tracing's cost


def section_tracing(bench: Bench) -> dict[str, Any]:
    """Publish cost with tracing off and on (issue 19, item 6): the API measured with wrk as in
    ``publish``, restarted before each run off, or exporting its spans to a local OTLP/HTTP receiver
    (every publish traced, or 10 % of them), in the order of :data:`TRACING_RUNS` and
    :data:`TRACING_PACED_RUNS`; then API processes alternating traced and untraced phases
    (:data:`TRACING_AB_LOADS`); the in-process cost of a traced publish beside the SDK's; and the
    work a publish does for tracing when it is off, timed in-process."""
    ensure_wrk()
    stack = bench.stack()
    with stack.client() as client:
        resp = client.post("workflow_topics", json={"key": "bench"})
        if resp.status_code not in (200, 201, 409):
            raise BenchError(f"creating the workflow topic failed: {resp.status_code} {resp.text}")
    authorization = f"Bearer {stack.credentials['access_token']}"
    url = f"{stack.base_url}/v1/organizations/{stack.org}/workflow_topics/bench/publish"

    def restart_api(env: dict[str, str] | None, command: list[str] | None = None) -> None:
        stack.stop_api()
        stack.api = stack._spawn("api", stack.var_dir / "api.log", env=env, command=command)

        def accepted() -> bool:
            try:
                return check_post(url, authorization) == 202
            except httpx.HTTPError:
                return False  # not listening yet

        wait_for(accepted, 120, "the restarted API")

    def watch() -> Watch:
        assert stack.api is not None
        return {"server": stack.api.pid, "worker": stack.workers[0].pid, "broker": bench.kafka().pid}

    progress(f"settling: {TRACING_SETTLE_S:g}s of publishes, not measured")
    run_wrk(bench, url, authorization, TRACING_SETTLE_S, watch())
    runs: list[dict[str, Any]] = []
    with otlp_receiver() as (received, endpoint):
        env = {
            "off": None,
            "on": {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint},
            "on 10%": {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "TOCSIN_TRACE_SAMPLE_RATIO": "0.1"},
        }
        env.update({"paced off": env["off"], "paced on": env["on"]})
        order = (*TRACING_RUNS, *TRACING_PACED_RUNS)
        for i, kind in enumerate(order):
            restart_api(env[kind])  # the last "on" run's spans are exported as its API stops
            delay = TRACING_PACE_MS if kind.startswith("paced") else 0
            run = measure(bench, f"tracing {kind} ({i + 1}/{len(order)})", url, authorization, watch(), delay_ms=delay)
            cpu = run["cpu_pct"].get("server")  # less sensitive than req/s to what else runs on the cores
            run.update(
                kind=kind,
                api_cpu_us_per_publish=(
                    round(cpu / 100 * run["elapsed_s"] / run["requests"] * 1e6, 1)
                    if cpu and run.get("requests")
                    else None
                ),
            )
            runs.append(run)
        alternating: dict[str, list[dict[str, Any]]] = {load: [] for load, _ in TRACING_AB_LOADS}
        for load, delay in TRACING_AB_LOADS:
            for i in range(TRACING_AB_PROCESSES):
                phases_file = bench.work_dir / f"trace-ab-{load}-{i}.jsonl"
                phases_file.unlink(missing_ok=True)
                command = ["-m", "tests.bench.trace_ab", f"{TRACING_AB_PERIOD_S:g}", str(phases_file)]
                restart_api(env["on"], command)
                name = f"tracing {load}, alternating {TRACING_AB_PERIOD_S:g} s phases ({i + 1}/{TRACING_AB_PROCESSES})"
                progress(f"{name}: warm-up {bench.args.warmup:g}s, then {TRACING_AB_SECONDS:g}s")
                run_wrk(bench, url, authorization, bench.args.warmup, watch(), delay_ms=delay)
                started = time.monotonic()
                run = run_wrk(bench, url, authorization, TRACING_AB_SECONDS, watch(), delay_ms=delay)
                ended = time.monotonic()
                stack.stop_api()
                measured = trace_ab.cost(trace_ab.read(phases_file), started, ended)
                measured.update(rps=run["rps"], errors=run["errors"])
                progress(f"{name}: {measured}")
                alternating[load].append(measured)
        spans = len([s for s in received.snapshot() if s.name == "publish"])
    restart_api(None)

    def alternated(measured: list[dict[str, Any]]) -> dict[str, Any]:
        """The runs of one load and the medians of their costs (None if a run had errors)."""
        complete = all(a["cost"] is not None and not a["errors"] for a in measured)
        return {
            "runs": measured,
            "period_s": TRACING_AB_PERIOD_S,
            "cost": statistics.median(a["cost"] for a in measured) if complete else None,
            "rate_ratio": statistics.median(a["rate_ratio"] for a in measured) if complete else None,
        }

    on_requests = sum(r["requests"] for r in runs if r["kind"] in ("on", "paced on"))
    sampled_requests = sum(r["requests"] for r in runs if r["kind"] == "on 10%")

    def costs(kind: str) -> dict[str, Any]:
        """Per ``kind`` run, its throughput and API CPU per publish against the mean of the off runs
        on either side of it; and their medians."""
        pairs = []
        for i, r in enumerate(runs):
            if r["kind"] != kind:
                continue
            before, after = runs[i - 1], runs[i + 1]
            if not (r["valid"] and before["valid"] and after["valid"]):
                pairs.append({"ratio": None, "cpu_cost": None})
                continue
            rps = (before["rps"] + after["rps"]) / 2
            cpu = (before["api_cpu_us_per_publish"] + after["api_cpu_us_per_publish"]) / 2
            pairs.append(
                {
                    "ratio": round(r["rps"] / rps, 3),
                    "cpu_cost": round(r["api_cpu_us_per_publish"] / cpu - 1, 3),
                    "off_spread": round(abs(before["rps"] - after["rps"]) / rps, 3),
                }
            )
        ratios = [p["ratio"] for p in pairs if p["ratio"] is not None]
        cpu_costs = [p["cpu_cost"] for p in pairs if p["cpu_cost"] is not None]
        complete = len(ratios) == len(cpu_costs) == len(pairs)
        return {
            "runs": pairs,
            "ratio": statistics.median(ratios) if complete else None,
            "cpu_cost": statistics.median(cpu_costs) if complete else None,
        }

    return {
        "runs": runs,
        "on": costs("on"),
        "sampled": costs("on 10%"),
        "paced": costs("paced on"),
        "alternating": alternated(alternating["paced"]),
        "alternating_saturated": alternated(alternating["saturated"]),
        "pace_ms": TRACING_PACE_MS,
        "publish_spans_exported": spans,
        "publishes_traced": on_requests + round(sampled_requests * 0.1),
        "off_path_ns": off_path_ns(),
        "traced_publish_cpu_us": traced_publish_cpu_us(),
        "errors": sum(r["errors"] for r in runs) + sum(a["errors"] for load in alternating.values() for a in load),
    }


def traced_publish_cpu_us(count: int = 5000, rounds: int = 5) -> dict[str, float]:
    """The median of ``rounds`` rounds of :func:`traced_publish_round` (a shared machine's noise)."""
    import statistics

    measured = [traced_publish_round(count) for _ in range(rounds)]
    return {key: round(statistics.median(m[key] for m in measured), 1) for key in measured[0]}


def traced_publish_round(count: int) -> dict[str, float]:
    """CPU microseconds (this thread's only: the receiver's thread is not counted) of what a traced
    publish adds to the API: its span with the record's header and its protobuf encoding (as the span
    ends), and its share of the OTLP export (the HTTP request), as the API does it (publish_spans.PublishSpan,
    span_batcher.SpanBatcher: batches of 2048), and, as a baseline measured in the same run, as the
    SDK does it (start_as_current_span, BatchSpanProcessor's batches of 512 by OTLPSpanExporter).
    A full garbage collection before each timed loop: a process that just imported the SDK has a
    first one pending, which would land in whichever loop comes first (about 25 us a span there)."""
    import gc

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind

    from app.observability import publish_spans, trace_context, tracing
    from app.observability.span_batcher import SpanBatcher

    figures: dict[str, float] = {}
    with otlp_receiver() as (received, endpoint):
        # the API's path: the batcher's thread is held off (no wake-up before `count` spans) and its
        # export timed in this thread
        batcher = SpanBatcher(f"{endpoint}/v1/traces", {"service.name": "bench"}, tracing.SCOPE, delay_s=3600)
        batch_size, batcher.batch_size, batcher.max_queue = batcher.batch_size, count + 1, count + 1  # no wake-up
        saved = tracing.enabled
        tracing.enabled = True
        publish_spans.set_sink(batcher.append)
        try:
            gc.collect()
            started = time.thread_time()
            for _ in range(count):
                with tracing.server_span("publish", tracing.PUBLISH_ROUTE, None, "org_bench", "bench") as span:
                    tracing.publish_headers()
                    span.set_attribute("tocsin.event_id", "evt_bench")
            figures["span_us"] = round((time.thread_time() - started) / count * 1e6, 1)
            batcher.batch_size = batch_size
            gc.collect()
            started = time.thread_time()
            batcher.flush()
            figures["export_us"] = round((time.thread_time() - started) / count * 1e6, 1)
        finally:
            tracing.enabled = saved
            publish_spans.set_sink(None)
            batcher.shutdown()
            structlog_clear()
        if batcher.exported != count or len(received.snapshot()) != count:
            raise BenchError(f"the receiver got {len(received.snapshot())} of {count} spans")
        # the SDK's path, as tracing.py used it before (the baseline)
        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        tracer = provider.get_tracer("bench")
        gc.collect()
        attributes = {"http.route": tracing.PUBLISH_ROUTE, "tocsin.organization_id": "org_bench", "tocsin.topic": "x"}
        started = time.thread_time()
        for _ in range(count):
            with tracer.start_as_current_span("publish", kind=SpanKind.SERVER, attributes=attributes) as sdk_span:
                trace_context.traceparent_of(sdk_span).encode()
                sdk_span.set_attribute("tocsin.event_id", "evt_bench")
        figures["sdk_span_us"] = round((time.thread_time() - started) / count * 1e6, 1)
        finished = list(memory.get_finished_spans())
        exporter = OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")
        gc.collect()
        started = time.thread_time()
        for i in range(0, len(finished), 512):
            exporter.export(finished[i : i + 512])
        figures["sdk_export_us"] = round((time.thread_time() - started) / count * 1e6, 1)
        exporter.shutdown()
        if len(received.snapshot()) != 2 * count:
            raise BenchError(f"the receiver got {len(received.snapshot()) - count} of {count} SDK spans")
    return figures


def structlog_clear() -> None:
    import structlog

    structlog.contextvars.clear_contextvars()


def off_path_ns(rounds: int = 1_000_000) -> float:
    """Nanoseconds a publish spends on tracing when it is off: the fast path's and the producer's
    check of ``tracing.enabled`` (nothing else runs), less the same loop without them."""
    from app.observability import tracing

    started = time.perf_counter_ns()
    for _ in range(rounds):
        if tracing.enabled:
            raise BenchError("tracing is on in the bench process")
        if tracing.enabled:
            raise BenchError("tracing is on in the bench process")
    checked = time.perf_counter_ns() - started
    started = time.perf_counter_ns()
    for _ in range(rounds):
        pass
    return round(max(0, checked - (time.perf_counter_ns() - started)) / rounds, 1)  # 0: within the timer's noise


def _against_target(cost: float) -> str:
    return f"target <= {TRACING_TARGET:.0%}: {'met' if cost <= TRACING_TARGET else 'NOT met'}"


def render_tracing(fig: dict[str, Any]) -> list[str]:
    lines = [f"{'run':<12}{'publishes/s':>12}{'p99 ms':>9}{'CPU% api':>10}{'api CPU us/pub':>16}"]
    for r in fig["runs"]:
        if not r["valid"]:
            lines.append(f"{r['kind']:<12}{'ERRORS':>12}")
            continue
        cpu = r["cpu_pct"].get("server")
        lines.append(f"{r['kind']:<12}{r['rps']:>12,.0f}{r['p99_ms']:>9}{cpu:>10}{r['api_cpu_us_per_publish']:>16}")
    lines.append(
        f"publish spans the local OTLP receiver got: {fig['publish_spans_exported']:,} "
        f"(the measured runs traced about {fig['publishes_traced']:,} publishes, and their warm-ups more)"
    )
    for label, key in (("on", "on"), ("on 10%", "sampled")):
        cost = fig[key]
        if cost["ratio"] is None:
            lines.append(f"{label} vs off: n/a (a run had errors)")
            continue
        each = ", ".join(
            f"{p['ratio']:.3f} / {p['cpu_cost']:+.1%} (off runs {p['off_spread']:.1%} apart)" for p in cost["runs"]
        )
        lines.append(f"{label} vs the off runs either side, throughput ratio / API CPU per publish: {each}")
        throughput_cost = 1 - cost["ratio"]
        lines.append(
            f"{label}, median: throughput cost {throughput_cost:.1%}, API CPU per publish {cost['cpu_cost']:+.1%} "
            f"({_against_target(max(throughput_cost, cost['cpu_cost']))})"
        )
    paced = fig.get("paced")
    if paced is not None:
        if paced["cpu_cost"] is None:
            lines.append("paced on vs off: n/a (a run had errors)")
        else:
            rates = [r["rps"] for r in fig["runs"] if r["kind"].startswith("paced") and r["valid"]]
            each = ", ".join(f"{p['cpu_cost']:+.1%}" for p in paced["runs"])
            lines.append(
                f"paced (each connection waits {fig['pace_ms']:g} ms after each response: "
                f"{min(rates):,.0f}-{max(rates):,.0f} publishes/s), on vs the paced off runs either side, "
                f"API CPU per publish: {each}; median {paced['cpu_cost']:+.1%} "
                f"({_against_target(paced['cpu_cost'])})"
            )
    for load, key in (("paced", "alternating"), ("saturated", "alternating_saturated")):
        alternating = fig.get(key)
        if alternating is None:
            continue
        if alternating["cost"] is None:
            lines.append(f"{load}, alternating on/off phases: n/a (a run had errors or no phase of a kind)")
            continue
        each = "; ".join(
            f"loop {a['loop_on_us']} vs {a['loop_off_us']} us + export {a['export_us']} us: {a['cost']:+.1%}"
            f" (publishes/s {a['rate_ratio']} x)"
            for a in alternating["runs"]
        )
        lines.append(
            f"{load}, inside each API process publishes traced and not in {alternating['period_s']:g} s phases "
            f"(CPU per publish of the event loop in on vs off phases, plus the export thread's per traced "
            f"publish; publishes per second of on phases against off ones): {each}; median "
            f"{alternating['cost']:+.1%}, publishes/s {alternating['rate_ratio']} x "
            f"({_against_target(max(alternating['cost'], 1 - alternating['rate_ratio']))})"
        )
    work = fig["traced_publish_cpu_us"]
    lines.append(
        f"in-process, CPU per traced publish: span, header and encoding {work['span_us']} us + its share of the "
        f"OTLP export {work['export_us']} us (compare with 'api CPU us/pub' off); the SDK's way (the baseline): "
        f"{work['sdk_span_us']} us + {work['sdk_export_us']} us"
    )
    lines.append(
        f"off: {fig['off_path_ns']} ns of tracing work per publish (two checks of a flag; no SDK is loaded, "
        "no header written or read): below what a throughput run can resolve"
    )
    return lines


SECTIONS.append(Section("tracing", section_tracing, render_tracing))


def section_formats(bench: Bench) -> dict[str, Any]:
    """CloudEvents binary mode beside the native publish, the Alertmanager receiver beside the batch
    publish (tests/bench/formats_bench.py), on the stack the publish section uses, another topic."""
    ensure_wrk()
    stack = bench.stack()
    with stack.client() as client:
        resp = client.post("workflow_topics", json={"key": "bench-formats"})
        if resp.status_code not in (200, 201):
            raise BenchError(f"creating the workflow topic failed: {resp.status_code} {resp.text}")
    authorization = f"Bearer {stack.credentials['access_token']}"
    org_url = f"{stack.base_url}/v1/organizations/{stack.org}"
    publish_url = f"{org_url}/workflow_topics/bench-formats/publish"
    for kind in ("native", "cloudevents"):  # each kind accepted once before it is measured
        env = lua_env(kind)
        extra = dict(line.split(": ", 1) for line in env.get("BENCH_HEADERS", "").splitlines())
        body = env["BENCH_BODY"].replace("%ID%", f"check-{kind}")
        check = httpx.post(
            publish_url,
            content=body,
            headers={**headers(authorization), **{k: v.replace("%ID%", "check") for k, v in extra.items()}},
            timeout=30,
        )
        if check.status_code != 202:
            raise BenchError(f"the {kind} check publish answered {check.status_code} {check.text}")
    assert stack.api is not None
    watch: Watch = {"server": stack.api.pid, "api": stack.api.pid, "worker": stack.workers[0].pid}
    watch["broker"] = bench.kafka().pid
    runs = []
    for i, kind in enumerate(RUNS):
        run = measure(bench, f"{kind} ({i + 1}/{len(RUNS)})", publish_url, authorization, watch, lua_env=lua_env(kind))
        runs.append({**run, "kind": kind})
    bodies = {
        "batch": (f"{publish_url}:batch", write_small_batch_body(bench.work_dir / "formats-batch.json")),
        "alertmanager": (
            f"{org_url}/integrations/alertmanager/bench-formats",
            write_alertmanager_body(bench.work_dir / "formats-alertmanager.json"),
        ),
    }
    batch_runs = []
    for i, kind in enumerate(BATCH_RUNS):
        url, body_file = bodies[kind]
        name = f"{kind} ({i + 1}/{len(BATCH_RUNS)})"
        run = measure(bench, name, url, authorization, watch, body_file, BATCH_CONNECTIONS)
        batch_runs.append({**run, "kind": kind})
    return formats_figures(runs, batch_runs)


# After publish (its stack, warmed up), before the sections that restart or load the machine otherwise.
_AFTER_PUBLISH = SECTIONS.index(next(s for s in SECTIONS if s.name == "publish")) + 1
SECTIONS.insert(_AFTER_PUBLISH, Section("formats", section_formats, render_formats))


def section_recovery(bench: Bench) -> dict[str, Any]:
    kafka = bench.kafka()
    return run_recovery_section(kafka.bootstrap, bench.work_dir, kafka.pid)


# Its own stack and worker; before publish, which leaves a worker draining its backlog.
SECTIONS.insert(
    SECTIONS.index(next(s for s in SECTIONS if s.name == "publish")),
    Section("recovery", section_recovery, render_recovery),
)


def section_memory(bench: Bench) -> dict[str, Any]:
    return run_memory_section(bench.kafka().bootstrap, bench.work_dir)


# Last: the longest section (a million partition keys), and it leaves no backlog behind.
SECTIONS.append(Section("memory", section_memory, render_memory))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="make bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=32, help="wrk connections (default 32)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per measured run (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up before each run (default 2)")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1)")
    parser.add_argument("--only", choices=[s.name for s in SECTIONS], help="run only this section")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON result file (default {RESULTS})")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, data)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = [s for s in SECTIONS if args.only in (None, s.name)]
    work_dir = Path(tempfile.mkdtemp(prefix="tocsin-bench-"))
    bench = Bench(args, work_dir)
    results: dict[str, dict[str, Any]] = {}
    loads: dict[str, list[float]] = {}
    failed = False
    try:
        for section in sections:
            progress(f"section {section.name}")
            load_before = os.getloadavg()[0]
            results[section.name] = section.run(bench)
            loads[section.name] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    except BaseException:
        failed = True
        if tails := bench.log_tails():
            print(tails, file=sys.stderr)
        raise
    finally:
        bench.cleanup.close()
        if args.keep or failed:
            progress(f"kept {work_dir}")
        else:
            shutil.rmtree(work_dir, ignore_errors=True)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    for name, fig in results.items():
        # the load average (1 min) at the section's start and end: others' work on the shared cores
        fig["_run"] = {"when": when, "commit": commit, "only": bool(args.only), "loadavg": loads.get(name)}
    report: dict[str, Any] = {
        "when": when,
        "commit": commit,
        "machine": {"cpus": psutil.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "settings": {k: v for k, v in vars(args).items() if k not in ("output", "keep")},
        "sections": results,
    }
    if args.only and args.output.exists():  # one section's run replaces that section of the last results
        previous = json.loads(args.output.read_text())
        report = {**previous, "sections": {**previous.get("sections", {}), **results}}
    print()
    for section in sections:
        print(f"== {section.name} ==")
        print("\n".join(section.render(results[section.name])))
    print(f"BENCH_JSON {json.dumps(report, separators=(',', ':'))}", flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    progress(f"saved {args.output}")
    if any(r.get("errors") for r in results.values()):
        raise SystemExit("bench: some runs had errors; their throughput is not a valid figure")


if __name__ == "__main__":
    main()
