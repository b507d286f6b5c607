"""Bench section ``control``: events/s through the control agent on one worker, from a topic
filled beforehand, next to a naive Faust pass-through agent (one ``send`` per event) and a
consume-only agent on the same topic in the same run (tests/bench/control_worker.py), and a peer
built with quixstreams (tests/bench/quix_peer.py: a stateful StreamingDataFrame with its RocksDB
state deciding the same METRIC ABSOLUTE rule per partition key, one output per NOTIFY) in a
virtualenv of its own (:func:`quix_python`).

The workload is a METRIC topic with a RUN_OPERATION_BOOK workflow: each partition key's value
rises most of the time (NOTIFY, one incident action each) and repeats every tenth event
(SUPPRESS). The incident and trace sinks do not run: the figure is the control agent's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from app.kafka.topics import PUBLISH
from app.settings import Settings
from devstack.ports import free_port
from tests.bench.common import (
    PROFILE,
    api_with_topic,
    cpu_seconds,
    progress,
    run_control_worker,
    stack_settings,
    write_publishes,
)
from tests.support.stack import ROOT, Stack

PASSTHROUGH_TOPIC = "bench-passthrough"  # also in tests/bench/control_worker.py (importing it starts an agent)
QUIX_OUTPUT_TOPIC = "bench-quix-notify"
EVENTS = 30_000
KEYS = 500
TARGET, STRETCH = 0.8, 1.0
QUIX_TARGET = 1.0  # control agent ÷ the quixstreams peer (issue 31)
ROUNDS = int(os.environ.get("TOCSIN_BENCH_ROUNDS", "2"))
MODES = tuple(
    os.environ.get("TOCSIN_BENCH_MODES", "getmany,getmany_json,consume,passthrough,control,quixstreams").split(",")
)
QUIX_LOCK = Path(__file__).with_name("quix-requirements.lock")
QUIX_VENV = ROOT / "var" / "bench-quix-venv"


def quix_python() -> Path:
    """The quixstreams peer's interpreter: a virtualenv of its own under var/ (quixstreams pins
    pydantic-settings below the product's lock), installed from tests/bench/quix-requirements.lock
    with its hashes on first use, and again when the lock changes."""
    python = QUIX_VENV / "bin" / "python"
    stamp = QUIX_VENV / ".installed"
    lock = QUIX_LOCK.read_text()
    if python.exists() and stamp.exists() and stamp.read_text() == lock:
        return python
    progress(f"control: installing quixstreams into {QUIX_VENV} (tests/bench/quix-requirements.lock)")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(QUIX_VENV)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--require-hashes", "-r", str(QUIX_LOCK)]
    subprocess.run(pip, check=True)
    stamp.write_text(lock)
    return python


async def _fill(settings: Settings, org_id: str, topic_id: str, total: int) -> None:
    """Write the workload to the publish topic as the API would, and the pass-through's topic."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [
                NewTopic(settings.topic(name), settings.publish_partitions, 1)
                for name in (PASSTHROUGH_TOPIC, QUIX_OUTPUT_TOPIC)
            ]
        )
    finally:
        await admin.close()
    await write_publishes(settings, org_id, topic_id, _publishes(total))


def _publishes(total: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Over ``KEYS`` partition keys in turn, a level that rises and every tenth time repeats."""
    for i in range(total):
        key, step = f"site-{i % KEYS}", i // KEYS
        level = 10.0 + step - (1 if step % 10 == 9 else 0)  # rises, and every tenth value repeats
        yield (
            key,
            {
                "status": "ACTUAL",
                "data": {"level": level},
                "event": {"name": f"{key} level {level}"},
                "event_control": {"partition_key": key, "metrics": {"level": level}},
            },
        )


def _sampler(mode: str) -> list[str]:
    """``TOCSIN_BENCH_PYSPY=DIR``: run each agent under py-spy (sampling, so coroutines and
    threads are seen as they are, unlike cProfile) and write DIR/MODE.txt for digging."""
    out = os.environ.get("TOCSIN_BENCH_PYSPY")
    if not out:
        return []
    os.makedirs(out, exist_ok=True)
    return [
        str(Path(sys.executable).parent / "py-spy"),
        "record",
        "--format",
        "raw",
        "-r",
        "200",
        "-o",
        os.path.join(out, f"{mode}.txt"),
        "--",
    ]


def _run_quix(stack: Stack, total: int) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    settings = stack_settings(stack)
    rule = PROFILE["rules"][0]
    log = stack.var_dir / "bench-quixstreams.log"
    argv = [
        *_sampler("quixstreams"),
        str(quix_python()),
        str(Path(__file__).with_name("quix_peer.py")),
        settings.kafka_bootstrap,
        settings.topic(PUBLISH),
        settings.topic(QUIX_OUTPUT_TOPIC),
        str(total),
        os.environ.get("TOCSIN_BENCH_WARMUP", "2000"),
        str(stack.var_dir / f"bench-quix-{tag}"),
        f"bench-quix-{tag}",
        rule["metric_name"],
        str(rule["threshold"]),
        str(PROFILE["exit_stable_limit"]),
    ]
    progress(f"control: quixstreams peer over {total} events")
    lines, returncode = run_control_worker(argv, dict(os.environ), log, 600, "quixstreams peer")
    for line in lines:
        if "CONTROL_BENCH " in line:
            result: dict[str, Any] = json.loads(line.split("CONTROL_BENCH ", 1)[1])
            return result
    raise RuntimeError(f"the quixstreams peer printed no result (exit {returncode}): {Stack.tail(log)}")


def _run(stack: Stack, mode: str, total: int, broker_pid: int | None) -> dict[str, Any]:
    """One agent's run; with the broker's CPU seconds over the agent's whole life (its start and
    warm-up included) beside the agent's own over the measured events (``cpu_s``)."""
    broker_before = cpu_seconds(broker_pid)
    result = _run_agent(stack, mode, total)
    result["broker_cpu_s"] = cpu_seconds(broker_pid) - broker_before
    return result


def _run_agent(stack: Stack, mode: str, total: int) -> dict[str, Any]:
    if mode == "quixstreams":
        return _run_quix(stack, total)
    tag = uuid.uuid4().hex[:8]
    env = {
        **stack.env,
        "TOCSIN_WORKER_ID": f"bench-{mode}-{tag}",
        "TOCSIN_WORKER_DATA_DIR": str(stack.var_dir / f"bench-{mode}-{tag}"),
        "TOCSIN_WORKER_PORT": str(free_port()),  # not the default 6066: another worker may hold it
    }
    log = stack.var_dir / f"bench-{mode}.log"
    progress(f"control: {mode} agent over {total} events")
    argv = [*_sampler(mode), sys.executable, "-m", "tests.bench.control_worker", mode, str(total)]
    lines, returncode = run_control_worker(argv, env, log, 600, f"{mode} agent")
    for line in lines:
        if "CONTROL_BENCH " in line:
            result: dict[str, Any] = json.loads(line.split("CONTROL_BENCH ", 1)[1])
            return result
    raise RuntimeError(f"the {mode} agent printed no result (exit {returncode}): {Stack.tail(log)}")


def run_control_section(kafka_bootstrap: str, work_dir: Any, broker_pid: int | None = None) -> dict[str, Any]:
    stack = Stack(work_dir / "control", kafka_bootstrap)
    try:
        topic_id, settings = api_with_topic(stack, "levels", PROFILE)
        progress(f"control: filling the publish topic with {EVENTS} events over {KEYS} partition keys")
        asyncio.run(_fill(settings, stack.org, topic_id, EVENTS))
        stack.stop()  # the API is not needed while the agents run: it would only share the cores
        # Two rounds, alternating, so a slow moment of this shared machine does not decide the ratio.
        rounds = [{mode: _run(stack, mode, EVENTS, broker_pid) for mode in MODES} for _ in range(ROUNDS)]
    finally:
        stack.stop()
    if any("passthrough" not in r or "control" not in r for r in rounds):
        raise RuntimeError("TOCSIN_BENCH_MODES must include passthrough and control")
    ratios = [r["control"]["rate"] / r["passthrough"]["rate"] for r in rounds]
    ratio = sum(ratios) / len(ratios)
    quix_ratios = [r["control"]["rate"] / r["quixstreams"]["rate"] for r in rounds if "quixstreams" in r]
    return {
        "quix_ratios": quix_ratios,
        "ratio_control_to_quixstreams": sum(quix_ratios) / len(quix_ratios) if quix_ratios else None,
        "quix_target": QUIX_TARGET,
        "events": EVENTS,
        "partition_keys": KEYS,
        "rounds": rounds,
        "ratios": ratios,
        "ratio_control_to_passthrough": ratio,
        "target": TARGET,
        "stretch": STRETCH,
        "met": ratio >= TARGET,
    }


def render_control(fig: dict[str, Any]) -> list[str]:
    lines = [
        f"   {'agent':<12} {'events/s':>10} {'seconds':>8} {'CPU us/event':>12} {'broker CPU s':>12}  counts",
    ]
    plain = ("mode", "events", "seconds", "rate", "cpu_s", "broker_cpu_s")
    for n, runs in enumerate(fig["rounds"], 1):
        for mode, run in runs.items():
            extra = {k: v for k, v in run.items() if k not in plain}
            cpu = f"{1e6 * run['cpu_s'] / run['events']:>12,.0f}" if "cpu_s" in run else f"{'-':>12}"
            broker = f"{run['broker_cpu_s']:>12.1f}" if "broker_cpu_s" in run else f"{'-':>12}"
            lines.append(f"{n}: {mode:<12} {run['rate']:>10,.0f} {run['seconds']:>8.2f} {cpu} {broker}  {extra}")
        lines.append(f"{n}: control / pass-through = {fig['ratios'][n - 1]:.2f}")
        if fig.get("quix_ratios"):
            lines.append(f"{n}: control / quixstreams = {fig['quix_ratios'][n - 1]:.2f}")
    ratio = fig["ratio_control_to_passthrough"]
    verdict = "stretch met" if ratio >= fig["stretch"] else "target met" if fig["met"] else "BELOW TARGET"
    lines.append(
        f"control / pass-through = {ratio:.2f} (target ≥ {fig['target']}, stretch ≥ {fig['stretch']}): {verdict}"
    )
    quix = fig.get("ratio_control_to_quixstreams")
    if quix is not None:
        quix_verdict = "met" if quix >= fig["quix_target"] else "NOT met"
        lines.append(f"control / quixstreams peer = {quix:.2f} (target ≥ {fig['quix_target']}): {quix_verdict}")
    lines.append(
        "note: getmany / getmany_json = aiokafka's own fetch of the same records, alone and with a JSON decode "
        "per record (the floor); control = the control stage on whole fetches (streams/control_batch.py)"
    )
    lines.append(
        f"note: {fig['events']} events over {fig['partition_keys']} partition keys, one worker, "
        "broker on the same cores; the sinks do not run"
    )
    lines.append(
        "note: CPU us/event = the agent process's CPU (every thread) over the measured events; broker CPU s = "
        "the broker's over the agent's whole run (its start, warm-up and the measured events)"
    )
    return lines
