"""Repeated library log lines, throttled: during a broker outage aiokafka logs every failed
connect and metadata refresh, tens of thousands of identical ERROR lines a minute per process
(60,000 in one 30 s outage test), which buries everything else and costs CPU when the machine
is already in trouble. The first line of a kind is written; the same line again within
``interval`` seconds is counted instead, and the next one written after the interval says how
many were left out."""

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


def throttle_library_logs(interval: float = 10.0) -> RepeatFilter:
    """Install one :class:`RepeatFilter` on every aiokafka logger (filters are not inherited)."""
    throttle = RepeatFilter(interval)
    names = set(AIOKAFKA_LOGGERS) | {n for n in logging.root.manager.loggerDict if n.startswith("aiokafka.")}
    for name in sorted(names):
        logging.getLogger(name).addFilter(throttle)
    return throttle
