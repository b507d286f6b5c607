"""The operator's scenario of issue 30, for the e2e tests and tests/operator_scenario.py: a METRIC
topic under a steady load from one worker; workers join, one is killed with ``kill -9`` and started
again on its own data directory, and the publishing ends at a chosen moment of that (while the group
still rebalances, or before or after it all). Then every accepted event must be decided as the spec's
METRIC table says, and every NOTIFY and RESOLVE delivered to the webhook, within a stated bound, with
no record given up as lost and every source partition applied to its last stable offset."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.domain.delivery.webhooks import new_secret
from tests.support.scaling import METRIC_PROFILE, MetricLoad, decision_lines, settled_to_decided_s
from tests.support.stack import Stack
from tests.support.tails import behind

# How long after the last publish (or the group's last change, if later) every accepted event must
# be decided and delivered: the tail watch fetches a quiet partition again 3 s after it stalls, and a
# rebalance with its tables' recovery takes up to ~15 s on two loaded cores.
BOUND_S = 60.0


@dataclass(frozen=True)
class Step:
    after_s: float  # seconds after the previous step (the first: after the load started)
    what: str  # "join": two workers, ready; "kill": kill -9 the last joined; "restart": it, on its own data; "end"


# The acceptance run: two join ~2 s into the load; ~4 s after they are in the group one is killed,
# ~2 s later it starts again on its own data directory, and publishing ends ~4 s after that, while
# the group still rebalances (the restarted worker joining, the killed one's session expiring).
WHILE_REBALANCING = (Step(2, "join"), Step(4, "kill"), Step(2, "restart"), Step(4, "end"))
# Publishing ends before the faults: the kill leaves partitions that receive nothing more.
BEFORE_THE_FAULTS = (Step(2, "join"), Step(3, "end"), Step(0.5, "kill"), Step(3, "restart"))
# The faults end well before the last publish, which lands on a settled group.
AFTER_THE_FAULTS = (Step(1, "join"), Step(2, "kill"), Step(2, "restart"), Step(20, "end"))
ORDERS = {"while-rebalancing": WHILE_REBALANCING, "before-faults": BEFORE_THE_FAULTS, "after-faults": AFTER_THE_FAULTS}


@dataclass
class Outcome:
    accepted: int = 0
    refused: int = 0
    undecided: list[str] = field(default_factory=list)
    wrong: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    undelivered: list[str] = field(default_factory=list)
    tails: list[str] = field(default_factory=list)  # partitions behind: topic[partition] offset
    decided_after_s: float = 0.0  # from the last publish or change to the last decision seen
    # the longest wait of an event for its decision after the later of its 202 and the group's last change
    settled_to_decided_s: float | None = None
    delivered_after_s: float = 0.0
    # when something is left behind: each worker log's last warnings and errors (what held it back)
    complaints: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.undecided or self.wrong or self.undelivered or self.tails)

    def describe(self) -> str:
        return (
            f"accepted {self.accepted} (refused {self.refused}); undecided {len(self.undecided)} "
            f"{self.undecided[:5]}; decided unlike the spec {len(self.wrong)} {list(self.wrong.items())[:3]}; "
            f"NOTIFY/RESOLVE not delivered {len(self.undelivered)} {self.undelivered[:5]}; "
            f"partitions behind {self.tails[:5]}; all decided "
            f"{self.decided_after_s:.1f} s and delivered {self.delivered_after_s:.1f} s after the last "
            f"publish or change; decided at most {self.settled_to_decided_s} s after the later of its 202 and the "
            "group's last change" + ("".join(f"\n  {c}" for c in self.complaints))
        )


def set_up_topic(stack: Stack, webhook_base: str, key: str = "levels") -> None:
    """A METRIC topic whose workflow sends each NOTIFY and RESOLVE to ``webhook_base``."""
    with stack.client() as client:
        topic = client.post(
            "/workflow_topics", json={"key": key, "name_en": key, "control_policy_profile": METRIC_PROFILE}
        )
        assert topic.status_code == 201, topic.text
        workflow = client.post(
            "/workflows",
            json={
                "name": key,
                "topic": key,
                "mode": "ACTUAL",
                "actions": [{"type": "SEND_WEBHOOK", "url": f"{webhook_base}/{key}", "secret": new_secret()}],
            },
        )
        assert workflow.status_code == 201, workflow.text


def run_scenario(
    stack: Stack,
    steps: Sequence[Step],
    delivered: Callable[[], Iterable[str]],
    logs: Callable[[], list[Path]],
    keys: int = 40,
    per_key: int = 100,  # more than the scenario sends: its "end" step stops the load
    rate: float = 100.0,
    bound_s: float = BOUND_S,
) -> Outcome:
    """The load and ``steps`` on ``stack`` (one worker running, topic ``levels`` set up), then the
    verdict. ``delivered`` gives the event ids the webhook received so far; ``logs`` every log with
    decision lines (the stack's workers and any other)."""
    load = MetricLoad(stack, "levels", keys=keys, per_key=per_key, rate=rate).start()
    joined: list[int] = []
    last_change = time.monotonic()
    for step in steps:
        time.sleep(step.after_s)  # the scenario's timeline, not a wait for a condition
        if step.what == "join":
            for _ in range(2):
                stack.start_worker(stack.worker_data_dir(f"w{len(stack.workers) + 1}"))
                joined.append(len(stack.workers) - 1)
            for index in joined[-2:]:
                stack.wait_worker_ready(index, timeout=180)  # in the group, its tables recovered
        elif step.what == "kill":
            stack.kill_worker(joined[-1])
        elif step.what == "restart":
            stack.start_worker(stack.worker_data_dir(f"w{joined[-1] + 1}"))  # its own data directory
            joined.append(len(stack.workers) - 1)
        elif step.what == "end":
            load.stop()
        else:
            raise ValueError(step.what)
        last_change = time.monotonic()
    load.join(120)
    ended = max(last_change, time.monotonic())
    return verdict(stack, load, delivered, logs, ended, bound_s)


def verdict(
    stack: Stack,
    load: MetricLoad,
    delivered: Callable[[], Iterable[str]],
    logs: Callable[[], list[Path]],
    ended: float,
    bound_s: float,
) -> Outcome:
    out = Outcome(accepted=len(load.accepted()), refused=sum(1 for p in load.sent if p.server_id is None))
    expected = load.expected()
    wanted = {e for e, d in expected.items() if d != "SUPPRESS"}
    deadline = ended + bound_s

    _until(lambda: expected.keys() <= decision_lines(logs()).keys(), deadline)  # the verdict names those missing
    out.decided_after_s = time.monotonic() - ended
    decisions = decision_lines(logs())
    out.undecided = sorted(expected.keys() - decisions.keys())
    accepted_at = {p.server_id: p.accepted_at for p in load.accepted() if p.server_id is not None}
    out.settled_to_decided_s = settled_to_decided_s(logs(), accepted_at)
    out.wrong = {e: (d, decisions[e]) for e, d in expected.items() if e in decisions and set(decisions[e]) != {d}}
    _until(lambda: wanted <= set(delivered()), deadline)
    out.delivered_after_s = time.monotonic() - ended
    out.undelivered = sorted(wanted - set(delivered()))

    # the workers still run: within the bound nothing may be left behind (the sinks' and deliveries'
    # offsets count once the group commits them, every few seconds)
    def quiet() -> bool:
        out.tails = asyncio.run(behind(stack))
        return not out.tails

    _until(quiet, max(deadline, time.monotonic() + 10), 1.0)
    if not out.ok:
        out.complaints = complaints(logs())
    return out


def complaints(logs: list[Path], last: int = 4) -> list[str]:
    """The last ``last`` warning and error lines of each log (``name: line``), for a verdict that failed."""
    found = []
    for path in logs:
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        bad = [line for line in lines if '"level":"warning"' in line or '"level":"error"' in line]
        found += [f"{path.name}: {line[:300]}" for line in bad[-last:]]
    return found


def _until(predicate: Callable[[], bool], deadline: float, interval: float = 0.5) -> bool:
    """Poll ``predicate`` until it holds (True) or ``deadline`` (monotonic) passes (False)."""
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)  # polling interval
    return True
