"""The quixstreams peer of the control bench: ``<quix venv>/bin/python tests/bench/quix_peer.py``.

What a user would build with quixstreams (the modern Python alternative to Faust) for the
control agent's job on the bench's workload: a ``StreamingDataFrame`` over the same pre-filled
publish topic, with its state in RocksDB (and its changelog topic, quixstreams' default), that
decides each publish per partition key by the same METRIC ABSOLUTE rule (app/domain/events/control.py:
a value at or above the threshold that raises the key's peak NOTIFIES and opens an episode, an
equal or lower one is SUPPRESSED, ``exit_stable_limit`` values below it in a row RESOLVE) and
writes one output record per NOTIFY. Peak hold and auto-resolve are left out: the workload's
values rise within seconds of event time, so neither changes a decision here (the counts printed
beside the control agent's show it).

It runs in a virtualenv of its own (tests/bench/quix-requirements.lock: quixstreams pins
pydantic-settings below the product's), so it imports nothing of Tocsin. The clock starts after
``warmup`` events, as tests/bench/control_worker.py's; once ``total`` were processed it prints one
``CONTROL_BENCH {...}`` line and exits.

Arguments: bootstrap input-topic output-topic total warmup state-dir consumer-group metric
threshold exit-stable-limit.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from typing import Any

from quixstreams import Application, State

(bootstrap, source, sink, total_s, warmup_s, state_dir, group, metric, threshold_s, exit_limit_s) = sys.argv[1:11]
total, warmup, threshold, exit_limit = int(total_s), int(warmup_s), float(threshold_s), int(exit_limit_s)
counts: Counter[str] = Counter()
processed = 0
started: float | None = None
measured_from = 0


def decide(value: dict[str, Any], state: State) -> dict[str, Any]:
    level = ((value.get("event_control") or {}).get("metrics") or {}).get(metric)
    decision = "SUPPRESS"
    if level is not None:
        peak = state.get("peak")
        if level >= threshold:
            state.set("stable", 0)
            if peak is None or level > peak:
                state.set("peak", level)
                decision = "NOTIFY"
        elif peak is not None:
            stable = state.get("stable", 0) + 1
            state.set("stable", stable)
            if stable >= exit_limit:
                state.delete("peak")
                state.set("stable", 0)
                decision = "RESOLVE"
    return {**value, "decision": decision}


cpu_started = 0.0  # process CPU seconds when the measured events began


def process_cpu() -> float:
    """CPU seconds of this whole process (every thread: librdkafka's too), user and system."""
    times = os.times()
    return times.user + times.system


def count(value: dict[str, Any]) -> None:
    global processed, started, measured_from, cpu_started
    if started is None and processed >= warmup:
        started, measured_from = time.perf_counter(), processed
        cpu_started = process_cpu()
    processed += 1
    counts[value["decision"]] += 1
    if processed >= total and started is not None:
        seconds = time.perf_counter() - started
        events = processed - measured_from
        cpu = process_cpu() - cpu_started
        result = {"mode": "quixstreams", "events": events, "seconds": seconds, "rate": events / seconds, "cpu_s": cpu}
        result.update(counts)
        print("CONTROL_BENCH " + json.dumps(result), flush=True)
        os._exit(0)  # measured; nothing of this throwaway consumer group needs a clean stop


def main() -> None:
    app = Application(
        broker_address=bootstrap,
        consumer_group=group,
        auto_offset_reset="earliest",
        state_dir=state_dir,
        loglevel="WARNING",
    )
    sdf = app.dataframe(app.topic(source, key_deserializer="str", value_deserializer="json"))
    sdf = sdf.apply(decide, stateful=True)
    sdf = sdf.update(count)
    sdf = sdf.filter(lambda value: value["decision"] == "NOTIFY")
    sdf.to_topic(app.topic(sink, key_serializer="str", value_serializer="json"))
    app.run()


if __name__ == "__main__":
    main()
