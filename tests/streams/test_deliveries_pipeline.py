"""The delivery agent's pipeline (streams/actions.py ``Deliveries``) without a broker: a slow
receiver holds back no other receiver's attempts or acknowledgements, a record is acknowledged
only once every item of it is written, a copy of an item under way is not attempted twice, and
attempts are limited per receiver."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from app.domain.delivery.delivery_verdicts import Attempt
from app.domain.shared.retry_schedule import RetrySchedule
from app.store.deliveries import DeliveryResult
from streams import actions, attempts
from streams.actions import Deliveries
from streams.attempts import ReceiverLimits
from tables.faust_errors import ProducerNotReady


@dataclass
class Message:
    timestamp: float = 1.0  # seconds, as Faust gives it


@dataclass
class Event:
    value: bytes
    message: Message = field(default_factory=Message)
    acks: int = 0

    def ack(self) -> bool:
        self.acks += 1
        return True


def _item(effect_id: str, host: str) -> dict[str, Any]:
    return {
        "effect_id": effect_id,
        "attempt": 1,
        "organization_id": "org_1",
        "event_id": f"evt_{effect_id}",
        "workflow_id": "wf_1",
        "action_index": 0,
        "mode": "ACTUAL",
        "decision": "NOTIFY",
        "topic_id": "wtp_1",
        "accepted_ms": 900,
        "content": {"url": f"http://{host}/hook", "body": "{}"},
    }


def _event(*items: dict[str, Any]) -> Event:
    return Event(json.dumps({"items": list(items)} if len(items) > 1 else items[0]).encode())


class Executor:
    """Answers each effect once its gate opens (at once for effects without a gate)."""

    kind = "WEBHOOK"

    def __init__(self, gates: dict[str, asyncio.Event]) -> None:
        self.gates = gates
        self.sent: list[str] = []

    async def send(self, item: dict[str, Any], secret: str | None) -> Attempt:
        self.sent.append(item["effect_id"])
        gate = self.gates.get(item["effect_id"])
        if gate is not None:
            await gate.wait()
        return Attempt(status_code=204, duration_ms=1)

    async def aclose(self) -> None:
        return None


class Pipeline:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, gates: dict[str, asyncio.Event]) -> None:
        async def no_secret(item: dict[str, Any]) -> tuple[str | None, bool]:
            return "secret", False

        monkeypatch.setattr(attempts, "_secret", no_secret)
        monkeypatch.setattr(actions, "recent", actions.RecentAttempts())
        self.executor = Executor(gates)
        self.written: list[str] = []
        self.queue: asyncio.Queue[Event] = asyncio.Queue()
        self.deliveries = Deliveries(self.executor, self.write)

        async def states(ids: list[str]) -> dict[str, tuple[str, int, int]]:
            return {}

        self.deliveries.states = states  # type: ignore[method-assign]  # no database here
        self.task = asyncio.create_task(self.deliveries.run(self.events()))

    async def write(self, results: list[DeliveryResult]) -> None:
        self.written.extend(r.item["effect_id"] for r in results)

    async def events(self) -> AsyncIterator[Event]:
        while True:
            yield await self.queue.get()

    async def until(self, condition: Any, what: str) -> None:
        async with asyncio.timeout(5):  # a deadline, not a sleep: the condition is polled
            while not condition():  # noqa: ASYNC110 - a condition polled until its deadline
                await asyncio.sleep(0.005)

    async def stop(self) -> None:
        self.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self.task


async def test_a_slow_receiver_holds_back_no_other_record(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = asyncio.Event()
    p = Pipeline(monkeypatch, {"act_slow": slow})
    first, second = _event(_item("act_slow", "slow.example")), _event(_item("act_fast", "fast.example"))
    p.queue.put_nowait(first)
    p.queue.put_nowait(second)
    await p.until(lambda: second.acks == 1, "the prompt record acknowledged")
    assert p.written == ["act_fast"] and first.acks == 0, "the slow record waits alone, unacknowledged"
    slow.set()
    await p.until(lambda: first.acks == 1, "the slow record acknowledged once answered")
    assert p.written == ["act_fast", "act_slow"] and second.acks == 1
    await p.stop()


async def test_a_record_is_acknowledged_once_every_item_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = asyncio.Event()
    p = Pipeline(monkeypatch, {"act_slow": slow})
    both = _event(_item("act_fast", "fast.example"), _item("act_slow", "slow.example"))
    p.queue.put_nowait(both)
    await p.until(lambda: p.written == ["act_fast"], "the prompt item written")
    assert both.acks == 0, "acknowledged with an item not written: a crash now would lose it"
    slow.set()
    await p.until(lambda: both.acks == 1, "the record acknowledged")
    assert sorted(p.written) == ["act_fast", "act_slow"]
    await p.stop()


async def test_a_copy_of_an_item_under_way_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = asyncio.Event()
    p = Pipeline(monkeypatch, {"act_slow": slow})
    original, copy = _event(_item("act_slow", "slow.example")), _event(_item("act_slow", "slow.example"))
    p.queue.put_nowait(original)
    await p.until(lambda: p.executor.sent == ["act_slow"], "the attempt under way")
    p.queue.put_nowait(copy)
    await p.until(lambda: not p.deliveries.received, "the copy checked")
    assert copy.acks == 0, "a copy acknowledged before its original is written"
    slow.set()
    await p.until(lambda: original.acks == copy.acks == 1, "both acknowledged")
    assert p.executor.sent == ["act_slow"] and p.written == ["act_slow"], "attempted and written once"
    # fetched again once written: skipped (attempted already) and acknowledged at once
    again = _event(_item("act_slow", "slow.example"))
    p.queue.put_nowait(again)
    await p.until(lambda: again.acks == 1, "the late copy acknowledged")
    assert p.executor.sent == ["act_slow"]
    await p.stop()


async def test_attempts_are_limited_per_receiver() -> None:
    limits = ReceiverLimits(2)
    gate = asyncio.Event()
    running = {"a": 0, "b": 0}
    most = {"a": 0, "b": 0}

    async def call(who: str) -> Attempt:
        running[who] += 1
        most[who] = max(most[who], running[who])
        if who == "a":
            await gate.wait()
        running[who] -= 1
        return Attempt(status_code=204)

    held = [asyncio.create_task(limits.run("a", lambda: call("a"))) for _ in range(5)]
    async with asyncio.timeout(5):
        await asyncio.gather(*(limits.run("b", lambda: call("b")) for _ in range(5)))
    assert most["a"] == 2, most
    assert not any(t.done() for t in held), "receiver a's attempts wait for its own slots"
    gate.set()
    async with asyncio.timeout(5):
        await asyncio.gather(*held)
    assert most["a"] == 2 and not limits.slots, "at most 2 at a time; an idle receiver is forgotten"


async def test_a_record_failing_its_check_is_dead_lettered_and_the_others_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    letters: list[tuple[str, str]] = []

    async def dead_letter(stage: str, event: Any, reason: str) -> None:
        letters.append((stage, reason))

    monkeypatch.setattr(actions, "send_dead_letter", dead_letter)
    p = Pipeline(monkeypatch, {})
    bad = _event({**_item("act_bad", "a.example"), "attempt": "first"})  # not a number: no retry can fix it
    good = _event(_item("act_good", "a.example"))
    p.queue.put_nowait(bad)
    p.queue.put_nowait(good)
    await p.until(lambda: bad.acks == 1 and good.acks == 1, "both records acknowledged")
    assert p.executor.sent == ["act_good"] and p.written == ["act_good"]
    assert len(letters) == 1 and letters[0][0] == "deliveries:WEBHOOK" and "ValueError" in letters[0][1], letters
    await p.stop()


class FailingExecutor(Executor):
    """Every attempt fails with a status worth a retry."""

    async def send(self, item: dict[str, Any], secret: str | None) -> Attempt:
        self.sent.append(item["effect_id"])
        return Attempt(status_code=503, duration_ms=1)


class StartingTopic:
    """A retry topic whose producer is not started for the first send (faust raises NotReady)."""

    def __init__(self) -> None:
        self.sent = 0

    async def send(self, key: bytes, value: bytes) -> asyncio.Future[None]:
        self.sent += 1
        if self.sent == 1:
            raise ProducerNotReady("Producer service not yet started")
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


async def test_a_producer_still_starting_is_waited_for_not_an_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A delivery stage may send a retry before faust's producer has started (mode flags the
    producer started before it creates its client): the write is tried again, logged as a warning,
    never as an error, and the record is acknowledged once written."""
    monkeypatch.setattr(actions, "WRITE_RETRIES", RetrySchedule(base_s=0.01, factor=1, max_delay_s=0.01))
    topic = StartingTopic()
    monkeypatch.setattr(actions, "retry_topics", dict.fromkeys(actions.retry_topics, topic))
    p = Pipeline(monkeypatch, {})
    p.deliveries.executor = FailingExecutor({})
    event = _event(_item("act_early", "hooks.example"))
    p.queue.put_nowait(event)
    await p.until(lambda: event.acks == 1, "the record acknowledged once the producer answers")
    assert p.written == ["act_early"] and topic.sent == 2
    assert [r.levelname for r in caplog.records if "still starting" in r.getMessage()] == ["WARNING"]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    await p.stop()
