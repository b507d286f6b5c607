"""The batch publish's request-by-request check lets the event loop serve other requests while it
works through a large body (the outside attacker held a replica's health check 1.4 s with four
clients sending 4 MiB batches)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from api.publish_batch import CHECKS_BETWEEN_YIELDS, MAX_LISTED_REFUSALS, checked_one_by_one
from app.domain.events.limits import PublishLimits
from app.errors import InvalidInput
from app.settings import Settings


def _state() -> Any:
    return SimpleNamespace(settings=Settings(), input_limits=PublishLimits())


async def _turns_while(check: Any) -> tuple[int, Any]:
    """How many times another task ran while ``check`` ran, and what it returned or raised."""
    turns = 0
    done = False

    async def other() -> None:
        nonlocal turns
        while not done:
            turns += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(other())
    await asyncio.sleep(0)
    started = turns
    try:
        outcome: Any = await check
    except InvalidInput as exc:
        outcome = exc
    done = True
    await ticker
    return turns - started, outcome


@pytest.mark.parametrize("ndjson", [False, True])
def test_other_tasks_run_while_a_large_batch_is_checked(ndjson: bool) -> None:
    items = [{"status": "ACTUAL", "data": {"i": i}} for i in range(1000)]
    body = b"\n".join(orjson.dumps(i) for i in items) if ndjson else orjson.dumps(items)
    turns, checked = asyncio.run(_turns_while(checked_one_by_one(_state(), body, ndjson=ndjson, required=False)))
    assert [r.data["i"] for r in checked] == list(range(1000))
    assert turns >= 1000 // CHECKS_BETWEEN_YIELDS - 1, turns


def test_a_refused_batch_yields_too_and_stops_at_its_hundredth_refusal() -> None:
    body = orjson.dumps([{"status": "ACTUAL"} for _ in range(1000)])  # none has data
    turns, refused = asyncio.run(_turns_while(checked_one_by_one(_state(), body, ndjson=False, required=False)))
    assert isinstance(refused, InvalidInput)
    assert len(refused.details["items"]) == MAX_LISTED_REFUSALS and refused.details["unchecked"] == 900
    assert turns >= MAX_LISTED_REFUSALS // CHECKS_BETWEEN_YIELDS - 1, turns
