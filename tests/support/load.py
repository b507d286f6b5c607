"""A steady publish load in a thread of its own, recording every answer, for the fault tests."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import httpx

from tests.support.stack import Stack


@dataclass(frozen=True)
class Answer:
    i: int
    status: int  # 0: no HTTP answer (connection error or timeout)
    code: str | None
    started: float
    ended: float


@dataclass
class SteadyPublisher:
    """Publishes ``event.id = {prefix}{i}`` to ``topic`` every ``interval`` seconds until stopped."""

    stack: Stack
    topic: str
    interval: float = 0.02
    prefix: str = "ev-"
    timeout: float = 15.0  # the client's wait for one answer
    answers: list[Answer] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> SteadyPublisher:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout + 45)
            assert not self._thread.is_alive(), "the publisher did not stop"

    def _run(self) -> None:
        with self.stack.client() as client:
            i = 0
            while not self._stop.is_set():
                body = {"status": "ACTUAL", "data": {"i": i}, "event": {"id": f"{self.prefix}{i}", "name": f"n{i}"}}
                started = time.monotonic()
                try:
                    r = client.post(f"/workflow_topics/{self.topic}/publish", json=body, timeout=self.timeout)
                    status, code = r.status_code, (r.json().get("code") if r.status_code != 202 else None)
                except httpx.HTTPError:
                    status, code = 0, None
                self.answers.append(Answer(i, status, code, started, time.monotonic()))
                i += 1
                # the load's pace, not a wait for a condition
                self._stop.wait(self.interval)

    def accepted(self) -> set[str]:
        return {f"{self.prefix}{a.i}" for a in self.answers if a.status == 202}

    def count(self, status: int) -> int:
        return sum(1 for a in self.answers if a.status == status)
