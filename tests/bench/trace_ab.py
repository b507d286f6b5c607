"""``python -m tests.bench.trace_ab PERIOD OUT``: ``tocsin api`` (as ``python -m cli api``) whose
publishes are traced in one phase and not in the next, alternating every PERIOD seconds, for the
``tracing`` section of ``make bench``. Bench-only: nothing of it is in the product.

The sampling decision (``tracing.traced``) follows the phase: every publish of an "on" phase is
traced (span, record header, export), none of an "off" phase (tracing set up, sampled out: the path of
``TOCSIN_TRACE_SAMPLE_RATIO=0``). A thread reads the event loop thread's CPU clock and counts the
publishes at each phase's end, with the export thread's CPU clock, and appends one JSON line per
phase to OUT. The cost of a traced publish is then measured inside one process: identical API
processes differ by several % in CPU per publish (hash seed, memory layout), more than the cost
measured, and the machine's drift over a minute is shared by both kinds of phase."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any


def install(period: float, out: Path) -> None:
    """Make ``tracing.traced`` follow the phases, and start the thread that records them."""
    from app.observability import tracing

    loop_clock = time.pthread_getcpuclockid(threading.main_thread().ident or 0)
    state = {"on": False}
    counts = {True: 0, False: 0}

    def traced(parent: Any, random: Any = None) -> bool:
        on = state["on"]
        counts[on] += 1
        return on

    tracing.traced = traced

    def export_ns() -> int:
        for thread in threading.enumerate():
            if thread.name == "tocsin-span-export" and thread.ident is not None:
                return time.clock_gettime_ns(time.pthread_getcpuclockid(thread.ident))
        return 0

    def record() -> None:
        with out.open("a") as lines:
            while True:
                on, started, cpu, published, exported = (
                    state["on"],
                    time.monotonic(),
                    time.clock_gettime_ns(loop_clock),
                    counts[state["on"]],
                    export_ns(),
                )
                time.sleep(period)
                state["on"] = not on
                phase = {
                    "on": on,
                    "start": started,
                    "end": time.monotonic(),
                    "loop_ns": time.clock_gettime_ns(loop_clock) - cpu,
                    "publishes": counts[on] - published,
                    "export_ns": export_ns() - exported,
                }
                lines.write(json.dumps(phase) + "\n")
                lines.flush()

    threading.Thread(target=record, name="bench-trace-ab", daemon=True).start()


def cost(phases: list[dict[str, Any]], start: float, end: float) -> dict[str, Any]:
    """The CPU per publish of the phases wholly between ``start`` and ``end`` (monotonic seconds):
    the event loop thread's in the on and the off phases, and the export thread's (all phases: it
    exports the on phases' spans whenever its batch is full) per traced publish; and the publishes
    per second of the on phases against the off ones."""
    inside = [p for p in phases if p["start"] >= start and p["end"] <= end]
    on = [p for p in inside if p["on"]]
    off = [p for p in inside if not p["on"]]
    traced = sum(p["publishes"] for p in on)
    untraced = sum(p["publishes"] for p in off)
    if not traced or not untraced:
        return {"phases": len(inside), "cost": None}
    loop_on = sum(p["loop_ns"] for p in on) / traced / 1e3
    loop_off = sum(p["loop_ns"] for p in off) / untraced / 1e3
    export = sum(p["export_ns"] for p in inside) / traced / 1e3
    on_s = sum(p["end"] - p["start"] for p in on)
    off_s = sum(p["end"] - p["start"] for p in off)
    return {
        "phases": len(inside),
        "traced": traced,
        "untraced": untraced,
        "loop_on_us": round(loop_on, 1),
        "loop_off_us": round(loop_off, 1),
        "export_us": round(export, 2),
        "cost": round((loop_on + export) / loop_off - 1, 3),
        # publishes per second of the on phases against the off ones (at saturation: the throughput)
        "rate_ratio": round(traced / on_s / (untraced / off_s), 3),
    }


def read(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


if __name__ == "__main__":
    install(float(sys.argv[1]), Path(sys.argv[2]))
    from cli.main import main

    main(["api"])
