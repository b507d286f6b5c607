"""Repeated library log lines, throttled: during a broker outage aiokafka logs every failed
connect and metadata refresh, tens of thousands of identical ERROR lines a minute per process
(60,000 in one 30 s outage test), which buries everything else and costs CPU when the machine
is already in trouble. The first line of a kind is written; the same line again within
``interval`` seconds is counted instead, and the next one written after the interval says how
many were left out.

Library ERROR lines that need no action are written as WARNING instead (an ERROR line means an
operator must act): :class:`RetriedErrorFilter` names each, with why."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

# aiokafka's module loggers (created here if aiokafka has not imported the module yet, so the
# module's own getLogger(__name__) returns the filtered logger).
AIOKAFKA_LOGGERS = (
    "aiokafka",
    "aiokafka.client",
    "aiokafka.cluster",
    "aiokafka.conn",
    "aiokafka.consumer.consumer",
    "aiokafka.consumer.fetcher",
    "aiokafka.consumer.group_coordinator",
    "aiokafka.producer.message_accumulator",
    "aiokafka.producer.producer",
    "aiokafka.producer.sender",
)


class RepeatFilter(logging.Filter):
    """Let through one record per (logger, message template) every ``interval`` seconds."""

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval, self.clock = interval, clock
        self.seen: dict[tuple[str, object], tuple[float, int]] = {}  # key → (last written at, left out since)

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.msg)
        now = self.clock()
        last = self.seen.get(key)
        if last is not None and now - last[0] < self.interval:
            self.seen[key] = (last[0], last[1] + 1)
            return False
        if last is not None and last[1]:
            record.msg = f"{record.msg} [and {last[1]} more like it in the last {now - last[0]:.0f} s]"
        if len(self.seen) > 10_000:  # templates, not values, are keys: this stays small; bound it anyway
            self.seen.clear()
        self.seen[key] = (now, 0)
        return True


class RetriedErrorFilter(logging.Filter):
    """Write as WARNING the library ERROR lines about a failure the library retries by itself.

    aiokafka's group coordinator logs "Group Coordinator Request failed: %s" as an ERROR and, for a
    retriable error, asks again after the retry backoff. It comes at the start of a worker on a
    broker that is still creating ``__consumer_offsets`` (GroupCoordinatorNotAvailableError) and
    during a coordinator move, and passes by itself; a broker that stays away is reported by the
    connection errors, which stay ERROR. A non-retriable error (no retry) stays ERROR.

    It also logs "OffsetCommit failed for group … due to group error (…), will rejoin" as an ERROR
    when a commit meets a rebalance (the generation moved on): it rejoins by itself, and the
    offsets not committed are read again by whoever holds the partition next (deduplicated
    downstream). Seen in tests/e2e/test_scaling.py when workers join and leave under load."""

    # Each retries a retriable error (args[0]) by itself: the coordinator lookup, the heartbeat.
    RETRIED = {
        ("aiokafka.consumer.group_coordinator", "Group Coordinator Request failed: %s"),
        ("aiokafka.consumer.group_coordinator", "Heartbeat send request failed: %s. Will retry."),
    }
    # "Error sending <request> to node <id> [<error>] -- marking coordinator dead": the coordinator is
    # looked up again and a retriable failure (a connection the broker closed) retried by its caller.
    RESENT = {("aiokafka.consumer.group_coordinator", "Error sending %s to node %s [%s] -- marking coordinator dead")}
    # "Failed fetch offsets from <node>: <error>": the fetcher's position lookup waits the retry
    # backoff and asks again (a partition whose leader is still being elected: a topic created a
    # moment before a stage's consumer started; tests/e2e/test_operations.py saw NotLeaderForPartition).
    REFETCHED = {("aiokafka.consumer.fetcher", "Failed fetch offsets from %s: %s")}
    REJOINED = {
        (
            "aiokafka.consumer.group_coordinator",
            "OffsetCommit failed for group %s due to group error (%s), will rejoin",
        ),
        # A consumer whose heartbeats stopped for longer than the session timeout (the process was
        # paused: SIGSTOP, a suspended VM, a long stall) looks the coordinator up again and rejoins
        # by itself; the broker had given its partitions to the others meanwhile
        # (tests/e2e/test_faults.py, the frozen worker).
        ("aiokafka.consumer.group_coordinator", "Heartbeat session expired - marking coordinator dead"),
    }

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.ERROR:
            return True
        key = (record.name, record.msg)
        args = record.args if isinstance(record.args, tuple) else ()
        retried = (
            (key in self.RETRIED and args and getattr(args[0], "retriable", False))
            or (key in self.RESENT and len(args) == 3 and getattr(args[2], "retriable", False))
            or (key in self.REFETCHED and len(args) == 2 and getattr(args[1], "retriable", False))
        )
        if key in self.REJOINED or retried:
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True


# The loggers of the mode ServiceThreads a worker runs (Faust's consumer thread), whose keepalive
# check logs "Thread keepalive is not responding..." (StalledThreadFilter).
THREAD_LOGGERS = ("faust.transport.drivers.aiokafka", "mode.threads")
KEEPALIVE = "Thread keepalive is not responding..."


class StalledThreadFilter(logging.Filter):
    """mode's ServiceThread checks every 1.1 s that its thread's event loop answered within the last
    3 s and logs "Thread keepalive is not responding..." as an ERROR when it did not. A process that
    was paused (SIGSTOP, a suspended VM) writes it once when it resumes, then its thread answers:
    nothing to act on, so that line is a WARNING. A thread that stays stuck repeats it every 1.1 s:
    a line within ``repeat`` seconds of the previous one stays an ERROR (stuck for 4 s or more)."""

    def __init__(self, repeat: float = 2.5, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.repeat, self.clock = repeat, clock
        self.last: float | None = None  # when the previous keepalive line came

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.ERROR or not str(record.msg).endswith(KEEPALIVE):
            return True
        now, last = self.clock(), self.last
        self.last = now
        if last is None or now - last > self.repeat:
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True


def throttle_library_logs(interval: float = 10.0) -> RepeatFilter:
    """Install one :class:`RepeatFilter` and one :class:`RetriedErrorFilter` on every aiokafka
    logger (filters are not inherited), and a :class:`StalledThreadFilter` on the thread loggers."""
    throttle, retried = RepeatFilter(interval), RetriedErrorFilter()
    names = set(AIOKAFKA_LOGGERS) | {n for n in logging.root.manager.loggerDict if n.startswith("aiokafka.")}
    for name in sorted(names):
        logging.getLogger(name).addFilter(retried)
        logging.getLogger(name).addFilter(throttle)
    stalled = StalledThreadFilter()
    for name in THREAD_LOGGERS:
        logging.getLogger(name).addFilter(stalled)
    return throttle
