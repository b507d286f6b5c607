"""Repeated library log lines are throttled: one per template and interval, then a count."""

from __future__ import annotations

import logging

import pytest
from aiokafka.errors import GroupAuthorizationFailedError, GroupCoordinatorNotAvailableError

from app.observability.logthrottle import (
    AIOKAFKA_LOGGERS,
    RepeatFilter,
    RetriedErrorFilter,
    StalledThreadFilter,
    throttle_library_logs,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _record(name: str, msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, None)


def test_one_line_per_template_and_interval_then_how_many_were_left_out() -> None:
    clock = Clock()
    throttle = RepeatFilter(interval=10, clock=clock)
    unable = "Unable connect to node with id %s: %s"
    written = []
    for i in range(2000):  # 2,000 failed connects in 20 s, two nodes, one template
        clock.now = 1000.0 + i * 0.01
        record = _record("aiokafka.client", unable, i % 2, "[Errno 111] Connection refused")
        if throttle.filter(record):
            written.append(record.getMessage())
    assert written == [
        "Unable connect to node with id 0: [Errno 111] Connection refused",
        "Unable connect to node with id 0: [Errno 111] Connection refused [and 999 more like it in the last 10 s]",
    ]


def test_other_templates_and_loggers_are_not_held_back() -> None:
    clock = Clock()
    throttle = RepeatFilter(interval=10, clock=clock)
    assert throttle.filter(_record("aiokafka.client", "Unable to update metadata from %s", [1]))
    assert throttle.filter(_record("aiokafka.client", "Unable connect to node with id %s: %s", 1, "x"))
    assert throttle.filter(_record("aiokafka.conn", "Unable to update metadata from %s", [1]))
    assert not throttle.filter(_record("aiokafka.client", "Unable to update metadata from %s", [2]))
    clock.now += 10
    again = _record("aiokafka.client", "Unable to update metadata from %s", [1])
    assert throttle.filter(again)
    assert again.getMessage() == "Unable to update metadata from [1] [and 1 more like it in the last 10 s]"


def test_installed_on_every_aiokafka_logger(caplog: pytest.LogCaptureFixture) -> None:
    throttle = throttle_library_logs(interval=60)
    try:
        for name in AIOKAFKA_LOGGERS:
            assert throttle in logging.getLogger(name).filters, name
        with caplog.at_level(logging.ERROR, logger="aiokafka"):
            for _ in range(50):
                logging.getLogger("aiokafka.conn").error("Unable connect to %s", "127.0.0.1:1")
        assert [r.getMessage() for r in caplog.records] == ["Unable connect to 127.0.0.1:1"]
    finally:
        for name in logging.root.manager.loggerDict:
            if name.startswith("aiokafka"):
                logging.getLogger(name).removeFilter(throttle)


def test_a_retried_coordinator_lookup_is_a_warning_and_a_final_one_stays_an_error() -> None:
    name, msg = "aiokafka.consumer.group_coordinator", "Group Coordinator Request failed: %s"
    retried = _record(name, msg, GroupCoordinatorNotAvailableError())
    final = _record(name, msg, GroupAuthorizationFailedError())
    other = _record(name, "Error sending JoinGroupRequest_v%s to node %s [%s] -- marking coordinator dead", 5, 1, "x")
    demote = RetriedErrorFilter()
    assert demote.filter(retried) and demote.filter(final) and demote.filter(other)
    assert (retried.levelno, retried.levelname) == (logging.WARNING, "WARNING")
    assert final.levelno == logging.ERROR
    assert other.levelno == logging.ERROR


def test_a_commit_that_met_a_rebalance_is_a_warning() -> None:
    """aiokafka rejoins by itself after "OffsetCommit failed … due to group error (…), will rejoin"."""
    name = "aiokafka.consumer.group_coordinator"
    msg = "OffsetCommit failed for group %s due to group error (%s), will rejoin"
    rejoin = _record(name, msg, "g.retry", "IllegalGenerationError")
    unauthorized = _record(name, "OffsetCommit failed for unauthorized topics %s", "t")
    demote = RetriedErrorFilter()
    assert demote.filter(rejoin) and demote.filter(unauthorized)
    assert (rejoin.levelno, rejoin.levelname) == (logging.WARNING, "WARNING")
    assert unauthorized.levelno == logging.ERROR


def test_a_coordinator_request_on_a_closed_connection_is_a_warning_and_a_fatal_one_stays_an_error() -> None:
    """aiokafka logs "Error sending … -- marking coordinator dead" as an ERROR, looks the
    coordinator up again and retries a retriable failure (a connection the broker closed: seen in
    the full suite's scaling e2e, which its teardown then failed on); a non-retriable one stays."""
    from aiokafka.errors import KafkaConnectionError, TopicAuthorizationFailedError

    name = "aiokafka.consumer.group_coordinator"
    msg = "Error sending %s to node %s [%s] -- marking coordinator dead"
    closed = _record(name, msg, "OffsetFetchRequest", 1, KafkaConnectionError("Connection closed"))
    fatal = _record(name, msg, "OffsetFetchRequest", 1, TopicAuthorizationFailedError())
    demote = RetriedErrorFilter()
    assert demote.filter(closed) and demote.filter(fatal)
    assert (closed.levelno, closed.levelname) == (logging.WARNING, "WARNING")
    assert fatal.levelno == logging.ERROR


def test_a_session_that_expired_while_paused_and_a_retried_heartbeat_are_warnings() -> None:
    """A worker resumed after a pause longer than its session timeout rejoins by itself; a heartbeat
    that failed on a retriable error is sent again. A non-retriable heartbeat failure stays an ERROR."""
    from aiokafka.errors import KafkaConnectionError, TopicAuthorizationFailedError

    name = "aiokafka.consumer.group_coordinator"
    expired = _record(name, "Heartbeat session expired - marking coordinator dead")
    msg = "Heartbeat send request failed: %s. Will retry."
    retried = _record(name, msg, KafkaConnectionError("Connection closed"))
    fatal = _record(name, msg, TopicAuthorizationFailedError())
    demote = RetriedErrorFilter()
    assert demote.filter(expired) and demote.filter(retried) and demote.filter(fatal)
    assert (expired.levelno, expired.levelname) == (logging.WARNING, "WARNING")
    assert (retried.levelno, retried.levelname) == (logging.WARNING, "WARNING")
    assert fatal.levelno == logging.ERROR


def test_a_thread_keepalive_line_once_is_a_warning_and_repeated_stays_an_error() -> None:
    """mode logs "Thread keepalive is not responding..." every 1.1 s while a thread's loop does not
    answer: once after a pause (the process resumed, the thread answers) it is a WARNING; a line
    coming again within 2.5 s (the thread still stuck) stays an ERROR."""
    now = [100.0]
    stalled = StalledThreadFilter(clock=lambda: now[0])
    name = "faust.transport.drivers.aiokafka"

    def line() -> logging.LogRecord:
        record = _record(name, "[^---AIOKafkaConsumerThread]: Thread keepalive is not responding...")
        assert stalled.filter(record)
        return record

    assert line().levelno == logging.WARNING  # resumed from a pause
    now[0] += 1.1
    assert line().levelno == logging.ERROR  # still not answering
    now[0] += 1.1
    assert line().levelno == logging.ERROR
    now[0] += 60
    assert line().levelno == logging.WARNING  # another pause, later
    other = _record(name, "[^---AIOKafkaConsumerThread]: Starting...")
    other.levelno = logging.ERROR
    assert stalled.filter(other) and other.levelno == logging.ERROR


def test_a_position_lookup_that_met_a_leader_election_is_a_warning_and_a_fatal_one_stays_an_error() -> None:
    """aiokafka's fetcher logs "Failed fetch offsets from …" as an ERROR, waits its retry backoff
    and looks the position up again. A stage's consumer started right after its topic was created
    met NotLeaderForPartition there (tests/e2e/test_operations.py failed on that line)."""
    from aiokafka.errors import NotLeaderForPartitionError, TopicAuthorizationFailedError

    name, msg = "aiokafka.consumer.fetcher", "Failed fetch offsets from %s: %s"
    election = _record(name, msg, 1, NotLeaderForPartitionError())
    fatal = _record(name, msg, 1, TopicAuthorizationFailedError())
    demote = RetriedErrorFilter()
    assert demote.filter(election) and demote.filter(fatal)
    assert (election.levelno, election.levelname) == (logging.WARNING, "WARNING")
    assert fatal.levelno == logging.ERROR
