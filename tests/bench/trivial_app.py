"""The baseline of ``make bench``: a plain FastAPI endpoint that validates the publish body.

It does what any FastAPI service does for a POST with a pydantic body (parse, validate,
answer) and nothing else: no auth, no topic lookup, no Kafka. The benchmark runs it as its
own process with exactly the server settings of ``tocsin api`` (uvloop, httptools, one
worker, access log off), so the ratio publish/trivial says what auth + validation + a
durable produce cost on top of plain FastAPI.

Run: ``python -m tests.bench.trivial_app --port 8123``
"""

from __future__ import annotations

import argparse

from fastapi import FastAPI
from pydantic import ConfigDict

from app.domain.publish import PublishRequest

app = FastAPI(title="tocsin-bench-trivial")


class Publish(PublishRequest):
    """The publish model as a plain FastAPI service declares it: FastAPI validates the decoded
    dict in Python mode, where a strict model refuses a string for an enum (Tocsin validates
    the raw JSON instead), so the top level is lax here; the work is the same."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


@app.post("/publish", status_code=202)
async def publish(body: Publish) -> dict[str, str]:
    return {"id": "x"}


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    # the same settings as app.cli.api.cmd_api (log level aside: nothing is logged per request there either)
    uvicorn.run(
        "tests.bench.trivial_app:app",
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
