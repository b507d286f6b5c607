"""One Faust worker of the control bench: ``python -m tests.bench.control_worker MODE TOTAL``.

MODE ``control`` runs the real control stage (streams/control_batch.py: whole fetches on its own
consumer, its stores and checkpoint, the workflow stage); ``passthrough`` a naive Faust agent that
sends each event on (one ``send`` per event); ``consume`` a Faust agent that only reads;
``getmany`` and ``getmany_json`` aiokafka's own fetch (the floor). Each times the events after the
first WARMUP and, once TOTAL were processed, prints one ``CONTROL_BENCH {...}`` line and exits. The
environment (TOCSIN_*) says which broker, topics, database and consumer group.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from collections.abc import Mapping
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
    import streams.control_batch as control_batch
    from tables.batch_stage import BatchStage

    process_records = BatchStage._process
    decide = control_batch.process

    async def counted_records(
        self: BatchStage, batch: list[Any], epoch: int, ends: Mapping[int, tuple[int, int]]
    ) -> None:
        begin()
        counts["batches"] += 1
        await process_records(self, batch, epoch, ends)
        done(len(batch))

    def counted_decide(*args: Any, **kwargs: Any) -> Any:
        result = decide(*args, **kwargs)
        for record, outputs in result.decided:
            counts[record["decision"]] += 1
            counts["actions"] += len(outputs.actions)
        return result

    BatchStage._process = counted_records  # type: ignore[method-assign]
    control_batch.process = counted_decide
elif mode in ("getmany", "getmany_json"):
    pass  # the floor: aiokafka's own fetch of the same records (below), with a JSON decode per record or not
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


async def floor(settings: Any, decode_each: bool) -> None:
    """aiokafka's ``getmany`` over the publish topic from its start, nothing else (and ``orjson.loads``
    of each value with ``decode_each``): the irreducible cost of taking the records."""
    import orjson
    from aiokafka import AIOKafkaConsumer

    from app.kafka.security import client_args
    from app.kafka.topics import PUBLISH

    consumer = AIOKafkaConsumer(
        settings.topic(PUBLISH),
        **client_args(settings),
        group_id=None,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        max_partition_fetch_bytes=4 * 1_048_576,
    )
    await consumer.start()
    while True:
        fetched = await consumer.getmany(timeout_ms=100, max_records=10_000)
        n = 0
        for records in fetched.values():
            n += len(records)
            if decode_each:
                for r in records:
                    orjson.loads(r.value)
        if n:
            begin()
            done(n)


if __name__ == "__main__":
    import asyncio

    from faust.worker import Worker

    from app import gc_tuning
    from app.kafka.app import settings
    from app.kafka.topics import ensure_topics
    from app.observability.logs import configure
    from tables.kafka_access import check_access

    configure(settings.log_format, settings.log_level)  # the log set-up of `tocsin worker` (its cost included)
    os.makedirs(app.conf.datadir, exist_ok=True)
    asyncio.run(ensure_topics(settings, check_access))
    if mode == "control":  # the control stage on whole fetches (tables/batch_stage.py): no Faust worker
        gc_tuning.tune()  # as `tocsin worker` does (streams/worker.py)
        asyncio.run(control_batch.run_control_stage(settings))
    if mode in ("getmany", "getmany_json"):
        asyncio.run(floor(settings, decode_each=mode == "getmany_json"))
    worker = Worker(app, loglevel="info", quiet=True, override_logging=False)
    worker.spinner = None  # with a spinner Faust sets the root logger to DEBUG: every debug call costs
    worker.execute_from_commandline()
