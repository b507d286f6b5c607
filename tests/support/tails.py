"""The quiet-tail check, read from outside the workers: every source partition of a stack applied
up to its last stable offset.

It is the reading ``tocsin partitions`` does before a grow (tables/drain.pending): what each stage's
group committed (the first record whose effects are not durable); a partition behind its
last stable offset passes only if the offsets in between hold no committed record (transaction
markers, aborted publishes). An open transaction is not counted here: the check is about what was
accepted, and a stack's API may be mid-transaction when a test ends.
"""

from __future__ import annotations

import asyncio

from aiokafka.admin import AIOKafkaAdminClient

from app.kafka.security import client_args
from app.settings import Settings
from tables.drain import pending
from tests.support.stack import Stack, wait_for


def _settings(stack: Stack) -> Settings:
    """The stack's settings as its processes read them (broker, security, prefix, worker id)."""
    env = {k.removeprefix("TOCSIN_").lower(): v for k, v in stack.env.items() if k.startswith("TOCSIN_")}
    return Settings.model_validate(env)


async def behind(stack: Stack) -> list[str]:
    """Every source partition of ``stack`` with a committed record its workers have not applied:
    ``topic[partition] first-offset``."""
    settings = _settings(stack)
    admin = AIOKafkaAdminClient(**client_args(settings))
    await admin.start()
    try:
        found = await pending(admin, settings)
    finally:
        await admin.close()
    return [f"{where} {offset}" for where, offset in sorted(found.records.items())]


def assert_quiet_tails(stack: Stack, bound_s: float = 60.0) -> None:
    """Within ``bound_s``, every source partition applied to its last stable offset (checked only
    while a worker of ``stack`` runs: nothing applies records otherwise)."""
    if not any(proc.poll() is None for proc in stack.workers):
        return
    last: list[str] = []

    def quiet() -> bool:
        nonlocal last
        last = asyncio.run(behind(stack))
        return not last

    try:
        wait_for(quiet, bound_s, "every source partition applied to its last stable offset", 1.0)
    except AssertionError:
        raise AssertionError(
            f"quiet tails: {len(last)} source partitions still behind after {bound_s:.0f} s "
            "(topic[partition] first unapplied offset): " + "; ".join(last[:10])
        ) from None
