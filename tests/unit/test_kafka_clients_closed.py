"""The worker's own Kafka clients are closed even when their start is cancelled (a worker stopped
while starting): aiokafka reports one left unclosed as the ERROR "Unclosed AIOKafkaConsumer"."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from app.kafka.config_changes import follow_changes
from app.settings import Settings
from streams.retry import RetryScheduler

Start = Callable[[Settings], Coroutine[Any, Any, None]]


@pytest.mark.parametrize(
    "start",
    [lambda s: follow_changes(s, lambda _org: None), lambda s: RetryScheduler(s).run()],
    ids=["config-changes", "retry-scheduler"],
)
async def test_a_client_cancelled_while_starting_is_closed(start: Start) -> None:
    with socket.socket() as server:  # a broker port that accepts connections and never answers
        server.bind(("127.0.0.1", 0))
        server.listen()
        settings = Settings(kafka_bootstrap=f"127.0.0.1:{server.getsockname()[1]}")  # type: ignore[call-arg]
        reported: list[str] = []
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: reported.append(str(context.get("message"))))
        task = asyncio.ensure_future(start(settings))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        del task
        gc.collect()
        await asyncio.sleep(0)
    assert [m for m in reported if m.startswith("Unclosed")] == []
