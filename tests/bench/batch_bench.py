"""The batch part of ``make bench``'s publish section: batch publish events/s next to its two
baselines measured in the same run — single publishes (the section's wrk run) and a raw aiokafka
producer writing the same records to the same topic (the broker's own ceiling here).

The batch run is wrk posting one JSON array of :data:`BATCH_ITEMS` publish requests (the section's
body, with :data:`KEYS` partition keys) over :data:`CONNECTIONS` keep-alive connections; its
events/s is 202s/s x :data:`BATCH_ITEMS`. The raw producer (this process, aiokafka, acks=all,
idempotent, the API's key partitioner and batch size) sends the records the API would write for those requests —
same key, same value shape, one new event id each — in rounds of :data:`BATCH_ITEMS` with
:data:`RAW_ROUNDS_IN_FLIGHT` rounds in flight, for the same duration, and counts what the broker
acknowledged; twice: as record batches per partition (aiokafka's fastest way, as the API's
publisher sends; the ceiling the target is checked against) and with one ``send`` a record (a
producer's usual loop).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer

from api.state import PRODUCER_BATCH_BYTES
from app.clock import now_ms
from app.domain.events.publish import PublishRequest, publish_record, state_key
from app.domain.shared.ids import new_id
from app.kafka import records
from app.kafka.partitioner import KeyPartitioner

BATCH_ITEMS = 1000
KEYS = 100  # partition keys in a batch (site-0 .. site-99): every partition of the topic gets records
CONNECTIONS = 4
RAW_ROUNDS_IN_FLIGHT = 4
TARGET_VS_SINGLE = 10.0
# API + broker CPU per accepted event of the batch publish ÷ the bare producer's own + the broker's
# per record (issue 31; "batch >= 0.5 x raw events/s" is retired: the worker consumes during one run
# and not the other)
TARGET_CPU_VS_RAW = 2.0


def batch_items(body: str) -> list[dict[str, Any]]:
    """The section's single-publish body, :data:`BATCH_ITEMS` times, over :data:`KEYS` partition keys."""
    item = orjson.loads(body)
    return [
        {**item, "event_control": {**item.get("event_control", {}), "partition_key": f"site-{i % KEYS}"}}
        for i in range(BATCH_ITEMS)
    ]


def write_batch_body(body: str, path: Path) -> Path:
    path.write_bytes(orjson.dumps(batch_items(body)))
    return path


def _raw_records(body: str, org_id: str, topic_id: str) -> list[tuple[bytes, dict[str, Any]]]:
    """(key, record without its id) of each request, as api/routes/publish.py builds them."""
    out = []
    for item in batch_items(body):
        request = PublishRequest.model_validate_json(orjson.dumps(item))
        key = state_key(org_id, topic_id, request.status.value, request.partition_key or "")
        out.append(
            (
                key.encode(),
                publish_record(event_id="", org_id=org_id, topic_id=topic_id, request=request, accepted_ms=0),
            )
        )
    return out


Round = list[tuple[bytes, bytes, int]]  # key, value, timestamp
_partitioner = KeyPartitioner()


async def _send_each(producer: AIOKafkaProducer, topic: str, round_: Round) -> list[Any]:
    """A producer's usual loop: one ``send`` per record."""
    return [await producer.send(topic, value=value, key=key, timestamp_ms=at) for key, value, at in round_]


async def _send_batches(producer: AIOKafkaProducer, topic: str, round_: Round) -> list[Any]:
    """One record batch per partition (``create_batch``/``send_batch``), as api/publisher.py sends."""
    partitions = sorted(await producer.partitions_for(topic))
    builders: dict[int, Any] = {}
    sends = []
    for key, value, at in round_:
        partition = _partitioner(key, partitions, partitions)
        builder = builders.get(partition)
        if builder is None:
            builder = builders[partition] = producer.create_batch()
        if builder.append(key=key, value=value, timestamp=at, headers=[]) is None:
            sends.append(await producer.send_batch(builder, topic, partition=partition))
            builder = builders[partition] = producer.create_batch()
            builder.append(key=key, value=value, timestamp=at, headers=[])
    for partition, builder in builders.items():
        sends.append(await producer.send_batch(builder, topic, partition=partition))
    return sends


async def _raw_rate(
    bootstrap: str, topic: str, prepared: list[tuple[bytes, dict[str, Any]]], seconds: float, batches: bool
) -> dict[str, Any]:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=True,
        linger_ms=0,
        max_batch_size=PRODUCER_BATCH_BYTES,  # as the API's transactional producers
        partitioner=KeyPartitioner(),
    )
    send = _send_batches if batches else _send_each
    await producer.start()
    try:
        in_flight: deque[list[Any]] = deque()
        acknowledged = 0
        started = time.perf_counter()
        deadline = started + seconds
        while time.perf_counter() < deadline:
            accepted = now_ms()
            round_ = [
                (key, records.encode({**record, "id": new_id("evt"), "accepted_ms": accepted}), accepted)
                for key, record in prepared
            ]
            in_flight.append(await send(producer, topic, round_))
            if len(in_flight) >= RAW_ROUNDS_IN_FLIGHT:
                await asyncio.gather(*in_flight.popleft())
                acknowledged += len(prepared)
        while in_flight:
            await asyncio.gather(*in_flight.popleft())
            acknowledged += len(prepared)
        elapsed = time.perf_counter() - started
    finally:
        await producer.stop()
    return {"records": acknowledged, "elapsed_s": round(elapsed, 2), "events_per_s": round(acknowledged / elapsed, 1)}


def raw_producer_rate(
    bootstrap: str, topic: str, body: str, org_id: str, topic_id: str, seconds: float, *, batches: bool
) -> dict[str, Any]:
    """Records/s a bare aiokafka producer gets acknowledged writing the batch's records to ``topic``:
    one record batch per partition (``batches``) or one ``send`` a record."""
    return asyncio.run(_raw_rate(bootstrap, topic, _raw_records(body, org_id, topic_id), seconds, batches))


def batch_figures(
    single: dict[str, Any], batch: dict[str, Any], raw: dict[str, Any], raw_each: dict[str, Any]
) -> dict[str, Any]:
    """Events/s of the runs and the ratios (None when a run had errors). ``raw``: record batches per
    partition, the ceiling the target is checked against; ``raw_each``: one ``send`` a record."""
    single_eps = single["rps"] if single.get("valid") else None
    batch_eps = round(batch["rps"] * BATCH_ITEMS, 1) if batch.get("valid") else None
    raw_eps = raw.get("events_per_s") or None
    each_eps = raw_each.get("events_per_s") or None

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a and b else None

    batch_cpu_us = raw_cpu_us = None
    cpu = batch.get("cpu_pct", {})
    if batch.get("valid") and cpu.get("api") is not None and cpu.get("broker") is not None and batch.get("ok"):
        seconds = (cpu["api"] + cpu["broker"]) / 100 * batch["elapsed_s"]
        batch_cpu_us = round(seconds / (batch["ok"] * BATCH_ITEMS) * 1e6, 2)
    if raw.get("cpu_s") and raw.get("records"):
        raw_cpu_us = round((raw["cpu_s"]["producer"] + raw["cpu_s"]["broker"]) / raw["records"] * 1e6, 2)

    return {
        "items_per_batch": BATCH_ITEMS,
        "batch": batch,
        "raw": raw,
        "raw_send_each": raw_each,
        "events_per_s": {"single": single_eps, "batch": batch_eps, "raw_aiokafka": raw_eps, "raw_send_each": each_eps},
        "ratio_batch_single": ratio(batch_eps, single_eps),
        "ratio_batch_raw": ratio(batch_eps, raw_eps),
        "ratio_batch_raw_send_each": ratio(batch_eps, each_eps),
        "cpu_us_per_event": {"batch": batch_cpu_us, "raw_aiokafka": raw_cpu_us},
        "ratio_cpu_batch_raw": ratio(batch_cpu_us, raw_cpu_us),
        "targets": {"batch_single": TARGET_VS_SINGLE, "cpu_batch_raw": TARGET_CPU_VS_RAW},
    }


def render_batch(fig: dict[str, Any]) -> list[str]:
    eps = fig["events_per_s"]
    batch = fig["batch"]

    def rate(value: float | None) -> str:
        return "ERRORS" if value is None else f"{value:,.0f}"

    cpu = batch.get("cpu_pct", {})
    lines = [
        f"batch publish ({fig['items_per_batch']} requests a batch, {CONNECTIONS} connections), events/s:",
        f"  batch publish            {rate(eps['batch']):>10}",
        f"  single publish           {rate(eps['single']):>10}  (the wrk run above)",
        f"  raw aiokafka, batches    {rate(eps['raw_aiokafka']):>10}  (record batches per partition: the ceiling)",
        f"  raw aiokafka, send each  {rate(eps['raw_send_each']):>10}  (one send() a record)",
        f"  batch p50 {batch.get('p50_ms')} ms, p99 {batch.get('p99_ms')} ms a batch; errors {batch.get('errors')};"
        f" CPU% api {cpu.get('api')}, broker {cpu.get('broker')}, worker {cpu.get('worker')},"
        f" others {cpu.get('other')}",
    ]
    value = fig["ratio_batch_single"]
    met = "n/a (a run had errors)" if value is None else "met" if value >= TARGET_VS_SINGLE else "NOT met"
    lines.append(f"ratio batch/single events/s: {value}  (target >= {TARGET_VS_SINGLE}: {met})")
    cpu_us = fig.get("cpu_us_per_event", {})
    value = fig.get("ratio_cpu_batch_raw")
    met = "n/a (a run had errors)" if value is None else "met" if value <= TARGET_CPU_VS_RAW else "NOT met"
    raw_cpu = fig["raw"].get("cpu_s", {})
    lines.append(
        f"CPU per accepted event, API + broker: batch publish {cpu_us.get('batch')} us; raw aiokafka (batches), "
        f"producer + broker: {cpu_us.get('raw_aiokafka')} us (producer {raw_cpu.get('producer')} s, broker "
        f"{raw_cpu.get('broker')} s over {fig['raw'].get('records', 0):,} records)"
    )
    lines.append(
        f"ratio batch/raw aiokafka CPU per event: {value}  (target <= {TARGET_CPU_VS_RAW}: {met}); events/s "
        f"{rate(eps['batch'])} vs {rate(eps['raw_aiokafka'])} (ratio {fig['ratio_batch_raw']}, no target)"
    )
    lines.append(f"ratio batch/raw aiokafka (send each) events/s: {fig['ratio_batch_raw_send_each']}  (no target)")
    lines.append(
        "note: raw aiokafka = one bare producer in the bench process (acks=all, idempotent, no transaction),"
        " the same records to the same topic; the batch path adds HTTP, validation and a transaction"
    )
    return lines
