"""The peer of ``make bench``'s publish figure: the ingress a user would write from the design
card's shape, without Tocsin.

A FastAPI endpoint that validates the publish body with pydantic, builds the same record the API
writes (same topic, key and value: the worker decides it) and awaits aiokafka's
``send_and_wait`` on one producer (acks=all, idempotent): a 202 once the broker acknowledged it.
No authentication, no topic lookup, no rate limit, no transaction. The benchmark runs it as its
own process with the server settings of ``tocsin api`` (uvloop, httptools, one worker, access
log off), against the same broker, with the same worker running.

Run: ``python -m tests.bench.naive_app --port 8123`` with BENCH_NAIVE_BOOTSTRAP (host:port),
BENCH_NAIVE_TOPIC, BENCH_NAIVE_ORG and BENCH_NAIVE_TOPIC_ID in the environment.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
from aiokafka import AIOKafkaProducer
from fastapi import FastAPI
from pydantic import ConfigDict

from app.clock import now_ms
from app.domain.events.publish import PublishRequest, publish_record, state_key
from app.domain.shared.ids import new_id

TOPIC = os.environ.get("BENCH_NAIVE_TOPIC", "")
ORG = os.environ.get("BENCH_NAIVE_ORG", "")
TOPIC_ID = os.environ.get("BENCH_NAIVE_TOPIC_ID", "")
producer: AIOKafkaProducer | None = None


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    global producer
    producer = AIOKafkaProducer(
        bootstrap_servers=os.environ["BENCH_NAIVE_BOOTSTRAP"], acks="all", enable_idempotence=True
    )
    await producer.start()
    try:
        yield
    finally:
        await producer.stop()


app = FastAPI(title="tocsin-bench-naive", lifespan=lifespan)


class Publish(PublishRequest):
    """The publish model as a plain FastAPI service declares it: FastAPI validates the decoded
    dict in Python mode, where a strict model refuses a string for an enum (Tocsin validates
    the raw JSON instead), so the top level is lax here; the work is the same."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


@app.post("/publish", status_code=202)
async def publish(body: Publish) -> dict[str, str]:
    assert producer is not None
    event_id = new_id("evt")
    accepted = now_ms()
    record = publish_record(event_id=event_id, org_id=ORG, topic_id=TOPIC_ID, request=body, accepted_ms=accepted)
    key = state_key(ORG, TOPIC_ID, body.status.value, body.partition_key or event_id)
    await producer.send_and_wait(TOPIC, orjson.dumps(record), key=key.encode(), timestamp_ms=accepted)
    return {"id": event_id}


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    # the same settings as `tocsin api` (log level aside: nothing is logged per request there either)
    uvicorn.run(
        "tests.bench.naive_app:app",
        host=args.host,
        port=args.port,
        loop="uvloop",
        http="httptools",
        workers=1,
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
