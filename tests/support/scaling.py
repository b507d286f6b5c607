"""Workers that come and go under a steady METRIC load, and the spec's METRIC table as the oracle.

``MetricLoad`` publishes a fixed cycle of values for many partition keys at a steady pace (each
key's publishes in order, one after the other); ``spec_decisions`` computes what the spec's
METRIC table (ABSOLUTE rule, threshold T, exit_stable_limit L, no peak hold, no auto-resolve)
gives for each key's accepted sequence, independently of the worker's code (``spec_set_decisions``
the same for the SET rule). ``WorkerChurn``
runs a scenario of worker joins, ``kill -9`` and restarts while the load flows, and
``decision_lines`` reads what every worker (killed ones included) logged.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

from tests.support.logs import all_records, text_of
from tests.support.stack import Stack, wait_for
from tests.support.tails import assert_quiet_tails

THRESHOLD = 10.0
EXIT_STABLE_LIMIT = 3
# One episode per cycle: open, raise, equal to the peak, raise, three values below → release.
CYCLE = (11.0, 12.0, 12.0, 13.0, 1.0, 2.0, 3.0)
METRIC_PROFILE = {
    "type": "METRIC",
    "rules": [{"metric_name": "level", "mode": "ABSOLUTE", "threshold": THRESHOLD}],
    "exit_stable_limit": EXIT_STABLE_LIMIT,
    "auto_resolve_duration": 0,
}


def spec_decisions(values: Sequence[float], threshold: float = THRESHOLD, limit: int = EXIT_STABLE_LIMIT) -> list[str]:
    """The spec's METRIC table (ABSOLUTE) for one partition key's values, in order. Written here,
    not imported, so that the worker's ``decide`` is checked against the spec and not itself.
    The sequences used never bring a value back above T inside the stable count (the spec leaves
    that case open)."""
    out: list[str] = []
    active, peak, below = False, 0.0, 0
    for v in values:
        if not active:
            if v >= threshold:
                active, peak, below = True, v, 0
                out.append("NOTIFY")
            else:
                out.append("SUPPRESS")
        elif v >= threshold:
            below = 0
            if v > peak:
                peak = v
                out.append("NOTIFY")
            else:
                out.append("SUPPRESS")
        else:
            below += 1
            if below >= limit:
                active = False
                out.append("RESOLVE")
            else:
                out.append("SUPPRESS")
    return out


def spec_set_decisions(areas: Sequence[Iterable[str]]) -> list[str]:
    """The spec's SET rule for one partition key's ``event_control.areas``, in order (no
    auto-resolve): an element not in the previously notified set gives NOTIFY and joins it;
    otherwise SUPPRESS. Written here, like ``spec_decisions``, independently of the worker."""
    notified: set[str] = set()
    out: list[str] = []
    for elements in areas:
        new = set(elements) - notified
        out.append("NOTIFY" if new else "SUPPRESS")
        notified |= new
    return out


@dataclass
class Published:
    key: str
    index: int  # position in the key's sequence
    value: float
    event_id: str  # the publisher's event.id
    server_id: str | None = None  # set when accepted (202)
    status: int = 0
    accepted_at: float = 0.0  # wall-clock time of the 202 (time.time())


@dataclass
class MetricLoad:
    """``per_key`` publishes for each of ``keys`` partition keys at about ``rate`` per second in all,
    from ``threads`` clients; a key belongs to one client, so its publishes stay in order."""

    stack: Stack
    topic: str
    keys: int = 40
    per_key: int = 30
    rate: float = 100.0
    threads: int = 4
    prefix: str = "m"
    sent: list[Published] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _workers: list[threading.Thread] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def total(self) -> int:
        return self.keys * self.per_key

    def start(self) -> MetricLoad:
        for t in range(self.threads):
            thread = threading.Thread(target=self._run, args=(t,), daemon=True)
            thread.start()
            self._workers.append(thread)
        return self

    def _run(self, t: int) -> None:
        mine = [k for k in range(self.keys) if k % self.threads == t]
        interval = self.threads / self.rate  # each client's share of the pace
        next_at = time.monotonic()
        with self.stack.client() as client:
            for index, k in itertools.product(range(self.per_key), mine):
                if self._stop.is_set():
                    return
                key = f"{self.prefix}-st{k:03d}"
                value = CYCLE[index % len(CYCLE)]
                item = Published(key, index, value, f"{key}-{index}")
                body = {
                    "status": "ACTUAL",
                    "data": {"station": key, "n": index},
                    "event": {"id": item.event_id, "name": f"{key} #{index}"},
                    "event_control": {"partition_key": key, "metrics": {"level": value}},
                }
                try:
                    r = client.post(f"/workflow_topics/{self.topic}/publish", json=body, timeout=30)
                    item.status = r.status_code
                    if r.status_code == 202:
                        item.server_id = r.json()["id"]
                        item.accepted_at = time.time()
                except httpx.HTTPError:
                    item.status = 0
                with self._lock:
                    self.sent.append(item)
                next_at += interval
                # the load's pace, not a wait for a condition
                self._stop.wait(max(0.0, next_at - time.monotonic()))

    def done(self) -> int:
        with self._lock:
            return len(self.sent)

    def stop(self) -> None:
        """End the load after each client's publish in flight (what was sent so far is the load)."""
        self._stop.set()
        self.join(60)

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for thread in self._workers:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._stop.set()
        assert not any(t.is_alive() for t in self._workers), "the load did not finish in time"

    def accepted(self) -> list[Published]:
        return [p for p in self.sent if p.server_id is not None]

    def decided_by_key(self) -> list[list[tuple[Published, str]]]:
        """Each key's accepted publishes in order, each with the spec's decision for it."""
        by_key: dict[str, list[Published]] = defaultdict(list)
        for p in self.accepted():
            by_key[p.key].append(p)
        decided = []
        for items in by_key.values():
            items.sort(key=lambda p: p.index)
            decided.append(list(zip(items, spec_decisions([p.value for p in items]), strict=True)))
        return decided

    def expected(self) -> dict[str, str]:
        """Server event id → the spec's decision, from each key's accepted values in order."""
        out: dict[str, str] = {}
        for pairs in self.decided_by_key():
            for p, decision in pairs:
                assert p.server_id is not None
                out[p.server_id] = decision
        return out


def _at(record: dict[str, object]) -> float:
    return datetime.fromisoformat(str(record["timestamp"]).replace("Z", "+00:00")).timestamp()


def settled_to_decided_s(logs: Iterable[Path], accepted: Mapping[str, float]) -> float | None:
    """The longest time any of the ``accepted`` events (server event id → wall-clock time of its
    202) waited for its decision after the later of its acceptance and the group's last change (the
    last partition assignment any worker's stage logged); None without an assignment or a decision."""
    settled = None
    decided: dict[str, float] = {}
    for _log, record in all_records(logs):
        if "timestamp" not in record:
            continue
        message = str(record.get("event", ""))
        if ": assigned partitions " in message:
            settled = max(settled or 0.0, _at(record))
        elif message == "decision" and (event_id := str(record.get("event_id"))) in accepted:
            decided.setdefault(event_id, _at(record))  # its first decision
    if settled is None or not decided:
        return None
    return max(0.0, *(at - max(settled, accepted[e]) for e, at in decided.items()))


def decision_lines(logs: Iterable[Path]) -> dict[str, list[str]]:
    """Server event id → every decision the workers logged for it (one line per decision made)."""
    found: dict[str, list[str]] = defaultdict(list)
    for _log, record in all_records(logs):
        if record.get("event") == "decision" and record.get("logger") == "streams.control":
            found[str(record["event_id"])].append(str(record["decision"]))
    return found


def error_lines(logs: Iterable[Path], allowed: Sequence[str] = ()) -> list[str]:
    """Every ERROR record of the workers' logs (an ERROR means an operator must act), and every
    line that is not a record but reads like an error (a traceback printed by no logger), whose
    message matches none of the ``allowed`` regexes (what a test provokes on purpose: a broker
    killed, a poison record)."""
    expected = [re.compile(pattern) for pattern in allowed]
    return [
        f"{log.name}: {record}"
        for log, record in all_records(logs)
        if (record.get("level") in ("error", "critical") or _error_text(record))
        and not any(p.search(text_of(record)) for p in expected)
    ]


def _error_text(record: dict[str, object]) -> bool:
    line = str(record.get("unparsed", ""))
    return "Traceback" in line or "ERROR" in line


def assert_no_errors(stack: Stack, allowed: Sequence[str] = ()) -> None:
    """No ERROR line in any worker log of ``stack`` but those matching ``allowed``."""
    lines = error_lines(stack.worker_logs, allowed)
    assert lines == [], f"{len(lines)} unexpected ERROR lines in the worker logs:\n" + "\n".join(lines[:20])


def stop_checked(stacks: Iterable[Stack], allowed: Sequence[str] = ()) -> None:
    """Stops every stack after checking it (every source partition applied to its last stable
    offset while a worker runs, no ERROR line but ``allowed``); then fails with every
    check that failed, on every stack."""
    problems = []
    for stack in stacks:
        for check in (assert_quiet_tails, lambda s: assert_no_errors(s, allowed)):
            try:
                check(stack)
            except AssertionError as exc:
                problems.append(str(exc))
        stack.stop()
    assert problems == [], problems


@dataclass
class Churn:
    """How much load had flowed (the caller's counter) when each change of the worker group happened."""

    joined: int
    killed: int
    restarted: int
    settled: int


def churn_workers(stack: Stack, flowed: Callable[[], int], step: int = 200) -> Churn:
    """The scaling scenario any e2e test can run around its own load (``flowed`` counts it, e.g.
    publishes answered): with one worker running, two more join; once the group settled, one of
    the newcomers is killed with ``kill -9`` and, a little later, restarted on its own data
    directory; returns once the restarted worker is ready and ``step`` more units have flowed."""

    def after(n: int, what: str) -> int:
        start = flowed()
        wait_for(lambda: flowed() >= start + n, 120, what, 0.05)
        return flowed()

    joined = flowed()
    first = len(stack.workers)
    stack.start_worker(stack.worker_data_dir(f"w{first + 1}"))
    stack.start_worker(stack.worker_data_dir(f"w{first + 2}"))
    stack.wait_worker_ready(first)
    stack.wait_worker_ready(first + 1)
    killed = after(int(step * 1.5), "more load once the group settled")
    stack.kill_worker(first + 1)
    restarted = after(step, "more load after the kill -9")
    stack.start_worker(stack.worker_data_dir(f"w{first + 2}"))  # back on its own data directory
    stack.wait_worker_ready(len(stack.workers) - 1)
    settled = after(int(step * 1.5), "more load after the restart")
    return Churn(joined, killed, restarted, settled)


def spec_episodes(load: MetricLoad) -> dict[str, bool]:
    """The episodes the spec's METRIC table opens over ``load``'s accepted events: the publisher
    event id of each episode's opening NOTIFY → whether a RESOLVE ended it (one incident each)."""
    episodes: dict[str, bool] = {}
    for pairs in load.decided_by_key():
        opener: str | None = None
        for p, decision in pairs:
            if decision == "NOTIFY" and opener is None:
                opener = p.event_id
                episodes[opener] = False
            elif decision == "RESOLVE" and opener is not None:
                episodes[opener], opener = True, None
    return episodes


@dataclass
class GrowShrink:
    """How much load had flowed when each change of the worker group happened (see grow_and_shrink)."""

    grown: int  # four workers ready
    first_killed: int
    second_killed: int
    restarted: int  # both restarted workers ready
    shrunk: int  # two workers stopped, two left
    settled: int
    at: dict[str, float] = field(default_factory=dict)  # each change → its wall-clock time (time.time())

    def last_change_before(self, when: float) -> str:
        """The change of the group that came last before ``when`` (wall clock), or "before any"."""
        earlier = [(at, what) for what, at in self.at.items() if at <= when]
        return max(earlier)[1] if earlier else "before any"


def grow_and_shrink(stack: Stack, flowed: Callable[[], int], step: int = 150) -> GrowShrink:
    """The scale-out scenario of issue 18 around a test's own load (``flowed`` counts it): from the
    one running worker, three more join (four in all); ``kill -9`` of one of them, some load later
    ``kill -9`` of another; the first restarts on its own data directory, the second on an empty
    one (its tables come back from the changelogs); then two workers stop (SIGTERM), leaving two.
    Between changes, ``step`` units of load flow; returns once they have after the shrink."""

    def after(n: int, what: str) -> int:
        start = flowed()
        wait_for(lambda: flowed() >= start + n, 180, what, 0.05)
        return flowed()

    assert len(stack.workers) == 1, "the scenario starts from one worker"
    at: dict[str, float] = {"three join": time.time()}
    for n in (2, 3, 4):
        stack.start_worker(stack.worker_data_dir(f"w{n}"))
    for index in (1, 2, 3):
        stack.wait_worker_ready(index, timeout=180)
    grown = after(step, "more load with four workers")
    at["first kill -9"] = time.time()
    stack.kill_worker(1)  # w2
    first_killed = after(step, "more load after the first kill -9")
    at["second kill -9"] = time.time()
    stack.kill_worker(2)  # w3
    second_killed = after(step, "more load after the second kill -9")
    at["two restart"] = time.time()
    stack.start_worker(stack.worker_data_dir("w2"))  # back on its own data directory
    stack.start_worker(stack.worker_data_dir("w3-empty"))  # a new disk: everything from the changelogs
    stack.wait_worker_ready(4, timeout=180)
    stack.wait_worker_ready(5, timeout=180)
    restarted = after(step, "more load after the restarts")
    at["two stop"] = time.time()
    stack.stop_worker(0)  # w1, the first
    stack.stop_worker(3)  # w4
    shrunk = after(step, "more load with two workers")
    for index in (4, 5):
        stack.wait_worker_ready(index, timeout=180)
    settled = after(step, "more load once the two settled")
    return GrowShrink(grown, first_killed, second_killed, restarted, shrunk, settled, at)
