"""``tocsin kafka-check``: connect to the configured Kafka as the API and the worker will (bootstrap
servers, TLS, SASL; docs/guides/managed-kafka.md) and print what it found as one JSON line: the brokers, and
which of Tocsin's topics exist. Exits non-zero with one line when the broker refuses the login, its
certificate is not trusted, or no broker answers."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from app.settings import Settings


async def kafka_check(settings: Settings) -> dict[str, Any]:
    from aiokafka.admin import AIOKafkaAdminClient

    from app.kafka.security import client_args, start_client
    from app.kafka.topics import topic_specs
    from tables.kafka_access import check_access

    admin = AIOKafkaAdminClient(**client_args(settings), request_timeout_ms=10000, client_id="tocsin-kafka-check")
    try:
        await start_client(admin, settings, check_access)
        cluster = await admin.describe_cluster()
        existing = set(await admin.list_topics())
    finally:
        await admin.close()
    wanted = [spec.name for spec in topic_specs(settings)]
    return {
        "bootstrap": settings.kafka_bootstrap,
        "security_protocol": settings.kafka_security.security_protocol,
        "sasl_mechanism": settings.kafka_security.sasl_mechanism,
        "brokers": sorted(f"{b['host']}:{b['port']}" for b in cluster.get("brokers") or ()),
        "topics_present": sum(1 for name in wanted if name in existing),
        "topics_missing": [name for name in wanted if name not in existing],
    }


def cmd_kafka_check(settings: Settings) -> None:
    from app.kafka.topics import UNREACHABLE

    # this command reports the outcome itself: aiokafka's own connection errors would repeat it
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    try:
        found = asyncio.run(kafka_check(settings))
    except UNREACHABLE as exc:
        raise SystemExit(f"tocsin: no Kafka broker of {settings.kafka_bootstrap} answered: {exc!r}") from None
    print(json.dumps(found), flush=True)
