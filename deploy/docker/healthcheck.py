#!/opt/tocsin/bin/python
"""The images' health checks (Dockerfile HEALTHCHECK, docker-compose.yml healthcheck):

    tocsin-healthcheck api       GET /readyz of the API (TOCSIN_API_PORT)
    tocsin-healthcheck worker    GET /readyz of the worker (TOCSIN_WORKER_HOST:TOCSIN_WORKER_PORT)
    tocsin-healthcheck kafka     a metadata request to TOCSIN_KAFKA_BOOTSTRAP lists a live broker
    tocsin-healthcheck smtp      the SMTP sink (TOCSIN_SMTP_HOST:PORT) greets with 220

Exit 0 when healthy, 1 otherwise (with the reason on stdout, which `docker inspect` keeps).
"""

from __future__ import annotations

import asyncio
import os
import smtplib
import sys
import urllib.error
import urllib.request


def http_ready(host: str, port: str) -> str | None:
    url = f"http://{host}:{port}/readyz"
    try:
        with urllib.request.urlopen(url, timeout=4) as response:
            return None if response.status == 200 else f"{url}: {response.status}"
    except (urllib.error.URLError, OSError) as exc:
        return f"{url}: {exc}"


async def kafka_live(bootstrap: str) -> str | None:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.errors import KafkaError

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000, client_id="tocsin-healthcheck")
    try:
        await asyncio.wait_for(admin.start(), 6)
        brokers = (await asyncio.wait_for(admin.describe_cluster(), 6)).get("brokers") or []
        return None if brokers else f"{bootstrap}: no live broker"
    except (KafkaError, OSError, TimeoutError) as exc:
        return f"{bootstrap}: {exc!r}"
    finally:
        try:
            await admin.close()
        except (KafkaError, OSError) as exc:
            print(f"closing the admin client: {exc!r}")


def smtp_greets(host: str, port: int) -> str | None:
    try:
        with smtplib.SMTP(host, port, timeout=4) as smtp:
            code, _ = smtp.noop()
            return None if code == 250 else f"{host}:{port}: NOOP answered {code}"
    except (smtplib.SMTPException, OSError) as exc:
        return f"{host}:{port}: {exc}"


def main() -> int:
    env = os.environ.get
    what = sys.argv[1] if len(sys.argv) > 1 else "api"
    if what == "api":
        problem = http_ready("127.0.0.1", env("TOCSIN_API_PORT", "8080"))
    elif what == "worker":
        problem = http_ready(env("TOCSIN_WORKER_HOST", "127.0.0.1"), env("TOCSIN_WORKER_PORT", "6066"))
    elif what == "kafka":
        problem = asyncio.run(kafka_live(env("TOCSIN_KAFKA_BOOTSTRAP", "127.0.0.1:9092")))
    elif what == "smtp":
        problem = smtp_greets(env("TOCSIN_SMTP_HOST", "127.0.0.1"), int(env("TOCSIN_SMTP_PORT", "8025")))
    else:
        problem = f"unknown check {what!r} (api, worker, kafka, smtp)"
    if problem:
        print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
