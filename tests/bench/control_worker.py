"""One Faust worker of the control bench: ``python -m tests.bench.control_worker MODE TOTAL``.

MODE ``control`` runs the real control agent (streams/control.py: tables, workflow stage,
batched outputs); ``passthrough`` a naive agent that sends each event on (one ``send`` per
event); ``consume`` only reads. Each times the events after the first WARMUP and, once TOTAL were
processed, prints one ``CONTROL_BENCH {...}`` line and exits. The environment (TOCSIN_*)
says which broker, topics, database and consumer group.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from typing import Any

from app.kafka.app import app, publish_topic, raw_topic

PASSTHROUGH_TOPIC = "bench-passthrough"

mode, total = sys.argv[1], int(sys.argv[2])
# The first events pay one-off costs (the database engine and the topic's configuration, the
# RocksDB partitions opening): the clock starts once this many were processed, in every mode.
WARMUP = int(os.environ.get("TOCSIN_BENCH_WARMUP", "2000"))
started: float | None = None
processed = 0
measured_from = 0
counts: Counter[str] = Counter()


_profile: Any = None
cpu_started = 0.0  # process CPU seconds when the measured events began


def process_cpu() -> float:
    """CPU seconds of this whole process (every thread), user and system."""
    times = os.times()
    return times.user + times.system


def begin() -> None:
    global started, _profile, measured_from, cpu_started
    if started is None and processed >= WARMUP:
        started, measured_from = time.perf_counter(), processed
        cpu_started = process_cpu()
        if os.environ.get("TOCSIN_BENCH_PROFILE"):  # a cProfile of the measured part, for digging
            import cProfile

            _profile = cProfile.Profile()
            _profile.enable()


# TOCSIN_BENCH_RSS_EVERY=N (the memory bench): print this process's resident memory once the warm-up
# is done, each time N more events were processed and at the end, as
# ``CONTROL_BENCH_RSS {"processed": ..., "rss_bytes": ...}``.
RSS_EVERY = int(os.environ.get("TOCSIN_BENCH_RSS_EVERY", "0"))


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def done(n: int) -> None:
    global processed
    crossed = (processed + n) // RSS_EVERY > processed // RSS_EVERY if RSS_EVERY else False
    if RSS_EVERY and (crossed or processed < WARMUP <= processed + n or processed + n >= total):
        sample = {"processed": processed + n, "rss_bytes": rss_bytes()}
        print("CONTROL_BENCH_RSS " + json.dumps(sample), flush=True)
    processed += n
    if processed >= total and started is not None:
        seconds = time.perf_counter() - started
        events = processed - measured_from
        cpu = process_cpu() - cpu_started
        result = {"mode": mode, "events": events, "seconds": seconds, "rate": events / seconds, "cpu_s": cpu, **counts}
        if _profile is not None:
            _profile.disable()
            _profile.dump_stats(os.environ["TOCSIN_BENCH_PROFILE"])
        print("CONTROL_BENCH " + json.dumps(result), flush=True)
        os._exit(0)  # measured; nothing of this throwaway consumer group needs a clean stop


if mode == "control":
    import streams.control as control

    process_batch, process = control.process_batch, control.process

    async def counted_batch(events: list[Any]) -> None:
        begin()
        counts["batches"] += 1
        await process_batch(events)
        done(len(events))

    def counted_process(*args: Any, **kwargs: Any) -> Any:
        result = process(*args, **kwargs)
        for record, outputs in result.decided:
            counts[record["decision"]] += 1
            counts["actions"] += len(outputs.actions)
        return result

    control.process_batch = counted_batch  # type: ignore[assignment]
    control.process = counted_process
elif mode == "passthrough":
    out = raw_topic(PASSTHROUGH_TOPIC)

    @app.agent(publish_topic)
    async def passthrough(stream: Any) -> None:
        async for event in stream.events():
            begin()
            await out.send(key=event.key, value=event.value)
            counts["sends"] += 1
            done(1)
elif mode == "consume":

    @app.agent(publish_topic)
    async def consume(stream: Any) -> None:
        async for _event in stream.events():
            begin()
            done(1)
else:
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    import asyncio

    from faust.worker import Worker

    from app.kafka.app import settings
    from app.kafka.topics import ensure_topics
    from app.observability.logs import configure
    from tables.kafka_access import check_access

    configure(settings.log_format, settings.log_level)  # the log set-up of `tocsin worker` (its cost included)
    os.makedirs(app.conf.datadir, exist_ok=True)
    asyncio.run(ensure_topics(settings, check_access))
    worker = Worker(app, loglevel="info", quiet=True, override_logging=False)
    worker.spinner = None  # with a spinner Faust sets the root logger to DEBUG: every debug call costs
    worker.execute_from_commandline()
