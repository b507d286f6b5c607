"""Faults on real processes: the broker stopped for 30 s under a steady publish load, and the
database stopped under the API and the worker. Nothing acknowledged is lost, nothing is
acknowledged that was not stored, and everything resumes by itself."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from app.domain.iam.tokens import generate_token
from devstack.kafka import LocalKafka
from tests.support.effects import entries_per_event, listen, sink_totals
from tests.support.load import SteadyPublisher
from tests.support.logs import records
from tests.support.postgres_local import LocalPostgres, find_pg_bin
from tests.support.scaling import assert_no_errors
from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.heavy]
OUTAGE_SECONDS = 30
PRODUCE_TIMEOUT = 4
PUBLISHERS = 4
# On the defaults: publishes in transactions (TOCSIN_PUBLISH_TRANSACTIONS, on by default since issue
# 31), so a 503 is never decided.
BROKER_FAULT_ENV = {
    "TOCSIN_PRODUCE_TIMEOUT_SECONDS": str(PRODUCE_TIMEOUT),
    "TOCSIN_ACCESS_LOG": "true",
}
DB_OUTAGE_SECONDS = 15


def _accepted(publishers: list[SteadyPublisher]) -> set[str]:
    return set().union(*(p.accepted() for p in publishers))


def _ready(url: str) -> int:
    try:
        return httpx.get(f"{url}/readyz", timeout=5).status_code
    except httpx.HTTPError:
        return 0


def test_broker_stopped_30_s_under_load_loses_nothing_and_resumes(tmp_path: Path) -> None:
    started = time.monotonic()
    broker = LocalKafka(tmp_path / "kafka")
    broker.start()
    stack = Stack(
        tmp_path / "stack",
        broker.bootstrap,
        extra_env=BROKER_FAULT_ENV,
    )
    publishers: list[SteadyPublisher] = []
    try:
        stack.start()
        with stack.client() as client:
            setup_topic(client, "quake", {"type": "BYPASS"})
            # A publish whose transaction's commit was asked for when the broker stopped is answered
            # when the broker is back (202, or 503 if the coordinator aborted it): wait that long.
            publishers = [
                SteadyPublisher(stack, "quake", prefix=f"p{k}-", timeout=OUTAGE_SECONDS + 60).start()
                for k in range(PUBLISHERS)
            ]
            wait_for(lambda: len(_accepted(publishers)) >= 100, 60, "100 accepted publishes before the fault")
            broker.stop()
            down_from = time.monotonic()
            # The steady publishers' requests in flight may all sit in a transaction whose commit was
            # asked for when the broker stopped: those are answered when it is back. Publishes that
            # start during the outage never reach a commit and must be refused within the timeout.
            probes = [
                SteadyPublisher(stack, "quake", prefix=f"d{k}-", interval=0.2, timeout=OUTAGE_SECONDS + 60).start()
                for k in range(2)
            ]
            publishers.extend(probes)
            wait_for(lambda: _ready(stack.base_url) == 503, 20, "the API to report not ready")
            wait_for(lambda: _ready(stack.worker_urls[0]) == 503, 20, "the worker to report not ready")
            # The outage lasts 30 s whatever happens; meanwhile every answer is checked below.
            while time.monotonic() - down_from < OUTAGE_SECONDS:
                assert stack.api is not None and stack.api.poll() is None, "the API died during the outage"
                time.sleep(0.5)
            for probe in probes:
                probe.stop()
            up_from = time.monotonic()
            broker.start()
            accepted_before = len(_accepted(publishers))
            try:
                wait_for(lambda: len(_accepted(publishers)) >= accepted_before + 100, 120, "publishes accepted again")
            except AssertionError:
                recent = [(a.status, a.code, round(a.ended - a.started, 1)) for p in publishers for a in p.answers[-5:]]
                raise AssertionError(
                    f"not accepted again; last answers {recent}; api: {stack.tail(stack.var_dir / 'api.log')}"
                ) from None
            for p in publishers:
                p.stop()
            accepted = _accepted(publishers)
            answers = [a for p in publishers for a in p.answers]
            sent = {f"{p.prefix}{a.i}" for p in publishers for a in p.answers}

            during = [a for a in answers if a.started > down_from and a.ended < up_from]
            assert during, "no publish was answered during the outage"
            assert {a.status for a in during} == {503}, {a.status for a in during}
            assert {a.code for a in during} == {"SYS-001"}
            slowest = max(a.ended - a.started for a in during)
            assert slowest < PRODUCE_TIMEOUT + 1.5, f"a 503 took {slowest:.1f} s"
            assert {a.status for a in answers} <= {202, 503}, "only 202 or 503, never a 500"
            incidents = _every_accepted_decided_once(stack, client, accepted)
            late = set(incidents) - accepted
            assert late <= sent, "an incident for an event never sent"
            # The spec: any answer but 202 means "not accepted". A refused publish is never decided,
            # even when the broker had its record when the 503 was sent (the transaction is aborted).
            assert not late, f"{len(late)} publishes refused with 503 were decided after all: {sorted(late)[:10]}"
            assert wait_for(lambda: _ready(stack.base_url) == 200, 60, "the API ready again")
            assert wait_for(lambda: _ready(stack.worker_urls[0]) == 200, 60, "the worker ready again")
            assert stack.api is not None and stack.api.poll() is None, "the API was not restarted"
            assert stack.workers[0].poll() is None, "the worker was not restarted"
            # aiokafka logs every failed connect and metadata refresh (60,000 lines in this outage
            # before app/observability/logthrottle.py): one line per kind and 10 s now, plus a count
            logs = {"api": stack.var_dir / "api.log", "worker": stack.worker_logs[0]}
            library_lines = {name: _aiokafka_errors(log) for name, log in logs.items()}
            assert all(n < 300 for n in library_lines.values()), library_lines
        print(
            f"\nbroker stopped {OUTAGE_SECONDS} s under load of {PUBLISHERS} publishers: {len(answers)} publishes, "
            f"{len(accepted)} accepted (202), {sum(p.count(503) for p in publishers)} refused (503 SYS-001, "
            f"{len(during)} of them during the outage, slowest {slowest:.1f} s); every accepted event "
            f"has its one incident: 0 lost, 0 duplicated; 0 refused publishes decided; "
            f"aiokafka ERROR lines logged {library_lines}; "
            f"{time.monotonic() - started:.0f} s"
        )
    finally:
        for p in publishers:
            p.stop()
        stack.stop()
        broker.stop()


PAUSES = 3
PAUSE_SECONDS = PRODUCE_TIMEOUT + 2


PAUSE_ATTEMPTS = 3


def _pause(broker: LocalKafka, publishers: list[SteadyPublisher]) -> bool:
    """Stop the broker (SIGSTOP) until a publish is refused with 503 and at least PAUSE_SECONDS
    passed, then resume it: True. A pause that lands while every publisher waits on a transaction
    whose commit was already asked for refuses nothing (api/publisher.py: that commit's outcome
    decides, however long it takes; each publisher sends one request at a time): False once
    PAUSE_SECONDS + 10 passed with no answer at all, to be tried again. Any answer while paused and
    no 503 fails the test."""
    pid = broker.pid
    assert pid is not None, "the broker is not running"
    answered_before = [len(p.answers) for p in publishers]
    refused_before = sum(p.count(503) for p in publishers)
    paused_at = time.monotonic()
    deadline = paused_at + PAUSE_SECONDS + 10
    os.kill(pid, signal.SIGSTOP)
    try:
        while time.monotonic() < deadline and sum(p.count(503) for p in publishers) == refused_before:
            time.sleep(0.1)  # polling interval
        refused = sum(p.count(503) for p in publishers) > refused_before
        if refused:
            # the pause's length, not a wait for a condition: the records stay in the socket buffer
            time.sleep(max(0.0, paused_at + PAUSE_SECONDS - time.monotonic()))
    finally:
        os.kill(pid, signal.SIGCONT)
    if not refused:
        answered = [a for p, n in zip(publishers, answered_before, strict=True) for a in p.answers[n:]]
        assert all(a.ended >= deadline for a in answered), f"answered while paused, no 503: {answered[:5]}"
    return refused


def test_broker_paused_under_load_no_refused_publish_is_decided(tmp_path: Path) -> None:
    """A broker that stops answering (SIGSTOP) for longer than the produce timeout, three times
    under load: the publishes in flight are refused with 503 while the broker holds their records
    in its socket buffer; when it resumes it stores them. None of them may be decided: any answer
    but 202 means "not accepted" (spec). Before the transactional publisher, some always were; it
    runs on the defaults (only the produce timeout shortened), where transactions are on."""
    started = time.monotonic()
    broker = LocalKafka(tmp_path / "kafka")
    broker.start()
    stack = Stack(
        tmp_path / "stack",
        broker.bootstrap,
        extra_env=BROKER_FAULT_ENV,
    )
    publishers: list[SteadyPublisher] = []
    try:
        stack.start()
        with stack.client() as client:
            setup_topic(client, "quake", {"type": "BYPASS"})
            publishers = [
                SteadyPublisher(stack, "quake", prefix=f"p{k}-", timeout=PAUSE_SECONDS + 60).start()
                for k in range(PUBLISHERS)
            ]
            wait_for(lambda: len(_accepted(publishers)) >= 100, 60, "100 accepted publishes before the fault")
            for _ in range(PAUSES):
                for attempt in range(1, PAUSE_ATTEMPTS + 1):
                    if _pause(broker, publishers):
                        break
                    assert attempt < PAUSE_ATTEMPTS, f"{PAUSE_ATTEMPTS} pauses in a row refused no publish"
                accepted_before = len(_accepted(publishers))
                wait_for(lambda n=accepted_before: len(_accepted(publishers)) >= n + 50, 60, "publishes accepted again")
            for p in publishers:
                p.stop()
            accepted = _accepted(publishers)
            answers = [a for p in publishers for a in p.answers]
            sent = {f"{p.prefix}{a.i}" for p in publishers for a in p.answers}
            refused = sent - accepted
            assert {a.status for a in answers} <= {202, 503}, {a.status for a in answers}
            assert len(refused) >= PAUSES, f"only {len(refused)} publishes refused"

            def processed() -> list[str] | None:
                found = [i["event_id"] for i in all_incidents(client)]
                return found if accepted <= set(found) else None

            incidents = wait_for(processed, 180, "an incident for every accepted publish")
            assert len(incidents) == len(set(incidents)), "one incident per event"
            # A refused record the broker stored would be decided by now or soon after: watch for 10 s.
            deadline = time.monotonic() + 10
            while True:
                decided = {i["event_id"] for i in all_incidents(client)} & refused
                assert not decided, f"{len(decided)} publishes refused with 503 were decided: {sorted(decided)[:10]}"
                if time.monotonic() > deadline:
                    break
                time.sleep(1)
        print(
            f"\nbroker paused {PAUSES} times for {PAUSE_SECONDS} s under load of {PUBLISHERS} publishers: "
            f"{len(answers)} publishes, {len(accepted)} accepted (202), {len(refused)} refused (503); every "
            f"accepted event has its one incident; 0 refused publishes decided; {time.monotonic() - started:.0f} s"
        )
    finally:
        for p in publishers:
            p.stop()
        stack.stop()
        broker.stop()


def test_database_stopped_answers_503_and_writes_nothing_half(tmp_path: Path, kafka: LocalKafka) -> None:
    if find_pg_bin() is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install PostgreSQL (.ci/run does): no server binaries found")
        pytest.skip("no PostgreSQL server binaries (.ci/run installs them; CI never skips)")
    started = time.monotonic()
    pg = LocalPostgres(tmp_path / "pg")
    pg.start()
    stack = Stack(tmp_path / "stack", kafka.bootstrap, database_url=pg.create_database("tocsin"))
    publisher: SteadyPublisher | None = None
    try:
        stack.start()
        with stack.client() as client:
            setup_topic(client, "quake", {"type": "BYPASS"})
            publisher = SteadyPublisher(stack, "quake", interval=0.05).start()
            wait_for(lambda: len(publisher.accepted()) >= 50, 60, "publishes before the fault")
            pg.stop()
            down_from = time.monotonic()
            listed = client.get("/workflow_topics")
            created = client.post("/workflow_topics", json={"key": "during"})
            seen = [listed, created]
            for r in seen:
                assert r.status_code == 503, r.text
                assert r.json()["code"] == "SYS-001" and r.headers["retry-after"]
            # The publisher's cached token and topic expire within seconds: then publishes are refused too.
            wait_for(lambda: publisher.answers[-1].status == 503, 30, "publishes refused with 503")
            assert publisher.answers[-1].code == "SYS-001"
            ready = httpx.get(f"{stack.base_url}/readyz", timeout=10)
            assert ready.status_code == 503 and ready.json()["checks"]["database"].startswith("unavailable")
            # The database stays down 15 s, so the worker's sinks meet the outage too.
            while time.monotonic() - down_from < DB_OUTAGE_SECONDS:
                assert stack.workers[0].poll() is None, "the worker died during the outage"
                time.sleep(0.5)
            pg.start()
            wait_for(lambda: _ready(stack.base_url) == 200, 60, "the API ready again")
            accepted_before = len(publisher.accepted())
            wait_for(lambda: len(publisher.accepted()) >= accepted_before + 20, 60, "publishes accepted again")
            publisher.stop()
            assert {a.status for a in publisher.answers} <= {202, 503}, "only 202 or 503, never a 500"

            keys = [t["key"] for t in client.get("/workflow_topics").json()["items"]]
            assert keys == ["quake"], f"the create refused with 503 was not written: {keys}"
            assert client.post("/workflow_topics", json={"key": "during"}).status_code == 201, "a retry succeeds"
            accepted = publisher.accepted()
            _every_accepted_decided_once(stack, client, accepted)
            assert stack.workers[0].poll() is None, "the worker was not restarted"
        print(
            f"\ndatabase stopped {DB_OUTAGE_SECONDS} s: {len(publisher.answers)} publishes, {len(accepted)} accepted, "
            f"{publisher.count(503)} refused with 503 SYS-001, 0 answered 500; management calls 503 SYS-001 "
            f"with Retry-After; the refused create was not written; every accepted event has its one incident "
            f"(0 lost, 0 duplicated); {time.monotonic() - started:.0f} s"
        )
    finally:
        if publisher is not None:
            publisher.stop()
        stack.stop()
        pg.stop()


def test_api_and_worker_started_before_the_broker_wait_for_it(tmp_path: Path) -> None:
    """A broker that is not up yet (a host restarting, a cluster coming back) is waited for: the
    API and the worker log each retry, stay alive, and serve once it answers."""
    started = time.monotonic()
    broker = LocalKafka(tmp_path / "kafka")
    broker.start()  # formatted, with its port fixed; then down while Tocsin starts
    broker.stop()
    stack = Stack(tmp_path / "stack", broker.bootstrap)
    api_log = stack.var_dir / "api.log"
    try:
        stack.bootstrap()  # the database only
        stack.api = stack._spawn("api", api_log)
        worker = stack.start_worker()
        for name, log in (("API", api_log), ("worker", stack.worker_logs[0])):
            wait_for(lambda log=log: "not reachable" in Stack.tail(log), 60, f"the {name} to report the broker down")
        assert stack.api.poll() is None and worker.poll() is None, "a process exited while the broker was down"
        assert _ready(stack.base_url) == 0, "the API served before it could reach the broker"
        waited = time.monotonic()
        broker.start()
        wait_for(lambda: _ready(stack.base_url) == 200, 120, "the API to become ready")
        stack.wait_worker_ready()
        ready_after = time.monotonic() - waited
        with stack.client() as client:
            setup_topic(client, "late", {"type": "BYPASS"})
            published = client.post("/workflow_topics/late/publish", json={"status": "ACTUAL", "data": {}})
            assert published.status_code == 202, published.text
            wait_for(lambda: len(all_incidents(client)) == 1, 60, "the incident of the first publish")
        print(
            f"\nbroker down while the API and the worker started: both waited (logged), "
            f"ready {ready_after:.1f} s after the broker came up, first publish → incident; "
            f"{time.monotonic() - started:.0f} s"
        )
    finally:
        stack.stop()
        broker.stop()


def test_api_and_worker_waiting_for_the_broker_stop_on_sigterm(tmp_path: Path) -> None:
    broker = LocalKafka(tmp_path / "kafka")
    broker.start()  # a port nobody answers on once stopped
    broker.stop()
    stack = Stack(tmp_path / "stack", broker.bootstrap)
    api_log = stack.var_dir / "api.log"
    try:
        stack.bootstrap()
        stack.api = stack._spawn("api", api_log)
        worker = stack.start_worker()
        for name, log in (("API", api_log), ("worker", stack.worker_logs[0])):
            wait_for(lambda log=log: "not reachable" in Stack.tail(log), 60, f"the {name} to report the broker down")
        for proc in (stack.api, worker):
            os.killpg(proc.pid, signal.SIGTERM)
        wait_for(lambda: stack.api.poll() is not None, 15, "the API to stop on SIGTERM while it waits")
        wait_for(lambda: worker.poll() is not None, 15, "the worker to stop on SIGTERM while it waits")
    finally:
        stack.stop()
        broker.stop()


def test_a_database_that_never_answers_gives_503_not_500(tmp_path: Path, kafka: LocalKafka) -> None:
    """A database host that accepts connections and never answers (a hung server, a half-open
    network) shows as a connect timeout, not a refused connection: still 503 SYS-001, never 500."""
    with socket.socket() as mute:  # accepts TCP (backlog), never speaks the PostgreSQL protocol
        mute.bind(("127.0.0.1", 0))
        mute.listen(64)
        url = f"postgresql+asyncpg://tocsin:secret@127.0.0.1:{mute.getsockname()[1]}/tocsin"
        stack = Stack(tmp_path / "stack", kafka.bootstrap, database_url=url)
        try:
            stack.api = stack._spawn("api", stack.var_dir / "api.log")
            wait_for(lambda: _status(f"{stack.base_url}/healthz") == 200, 60, "the API to serve /healthz")
            auth = {"Authorization": f"Bearer {generate_token()}"}
            org = f"{stack.base_url}/v1/organizations/org_1"
            answers = {
                "list topics": httpx.get(f"{org}/workflow_topics", headers=auth, timeout=60),
                "publish": httpx.post(
                    f"{org}/workflow_topics/quake/publish",
                    headers=auth,
                    json={"status": "ACTUAL", "data": {}},
                    timeout=60,
                ),
                "readyz": httpx.get(f"{stack.base_url}/readyz", timeout=60),
            }
            for what in ("list topics", "publish"):
                answer = answers[what]
                assert answer.status_code == 503, (what, answer.status_code, answer.text)
                assert answer.json()["code"] == "SYS-001" and answer.headers["Retry-After"], (what, answer.text)
            assert answers["readyz"].status_code == 503
            assert stack.api.poll() is None
        finally:
            stack.stop()
    log = (stack.var_dir / "api.log").read_text(errors="replace")
    assert "database unavailable: TimeoutError" in log, Stack.tail(stack.var_dir / "api.log")
    assert "unhandled error" not in log, Stack.tail(stack.var_dir / "api.log")
    print(f"\ndatabase that never answers: {', '.join(f'{k} {v.status_code}' for k, v in answers.items())}")


def _every_accepted_decided_once(stack: Stack, client: httpx.Client, accepted: set[str]) -> list[str]:
    """Once every ``accepted`` event has its incident (within 180 s), and no more come: the events
    of the incidents, each with one effect (:func:`_assert_one_effect_per_event`)."""

    def processed() -> list[str] | None:
        found = [i["event_id"] for i in all_incidents(client)]
        return found if accepted <= set(found) else None

    wait_for(processed, 180, "an incident for every accepted publish")
    incidents = listen(lambda: [i["event_id"] for i in all_incidents(client)])
    _assert_one_effect_per_event(stack, incidents)
    return incidents


def _assert_one_effect_per_event(stack: Stack, incidents: list[str]) -> None:
    """Each published ``event.id`` (never published twice here) has one incident whose timeline is
    its one CREATED entry, and the sink updated nothing. A second effect for an event would not
    show as a second incident (same ``event.id`` on a BYPASS topic: a timeline update) but here."""
    assert len(incidents) == len(set(incidents)), "one incident per event"
    entries = entries_per_event(stack)
    undisturbed = Counter({(e, "CREATED"): 1 for e in incidents})
    assert entries == undisturbed, f"second effects: {sorted((entries - undisturbed).items())[:5]}"
    totals = sink_totals(stack.worker_logs)
    assert totals["updated"] == 0, totals


def _aiokafka_errors(log: Path) -> int:
    """ERROR records of aiokafka's connection and metadata handling in a process's log."""
    return sum(
        1
        for r in records(log)
        if r.get("level") == "error" and ("Unable " in str(r.get("event")) or "NodeNotReady" in str(r.get("event")))
    )


def _status(url: str) -> int:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return 0


FREEZE_SECONDS = 15  # past the worker's session timeout (10 s, app/kafka/app.py)


def test_a_worker_frozen_past_its_session_rejoins_with_no_error_line(tmp_path: Path, kafka: LocalKafka) -> None:
    """A worker stopped (SIGSTOP: a paused VM, a swap storm) for longer than its session timeout,
    then resumed: the broker drops it from the group, it rejoins by itself, every accepted event
    gets its one incident, and its log has no ERROR line, since there is nothing for an operator to
    do (an outside attacker's finding: aiokafka's "Heartbeat session expired" and mode's "Thread
    keepalive is not responding" were ERROR lines)."""
    stack = Stack(tmp_path / "stack", kafka.bootstrap)
    publisher: SteadyPublisher | None = None
    try:
        stack.start()
        with stack.client() as client:
            setup_topic(client, "quake", {"type": "BYPASS"})
            publisher = SteadyPublisher(stack, "quake", interval=0.05).start()
            wait_for(lambda: len(publisher.accepted()) >= 50, 60, "publishes before the freeze")
            wait_for(lambda: len(all_incidents(client)) >= 20, 60, "the worker deciding before the freeze")
            pid = stack.workers[0].pid
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(FREEZE_SECONDS)  # the freeze's length, not a wait for a condition
            finally:
                os.kill(pid, signal.SIGCONT)
            accepted_before = len(publisher.accepted())
            wait_for(lambda: len(publisher.accepted()) >= accepted_before + 50, 60, "publishes after the freeze")
            publisher.stop()
            accepted = publisher.accepted()
            _every_accepted_decided_once(stack, client, accepted)
            assert stack.workers[0].poll() is None, "the worker exited"
        assert_no_errors(stack)
    finally:
        if publisher is not None:
            publisher.stop()
        stack.stop()
