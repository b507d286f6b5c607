"""A three-broker KRaft cluster (replication factor 3, min.insync.replicas 2) losing a broker
to ``kill -9`` in the middle of 10,000 publishes: every publish answered 202 ends in exactly one
decision and one incident; 503s happen only while the cluster moves the dead broker's leaders."""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError

from devstack.kafka_cluster import LocalKafkaCluster
from devstack.ports import run_coro_sync
from tests.support.effects import listen, sink_totals
from tests.support.scaling import decision_lines
from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.heavy]

TOTAL = 10_000
KILL_AFTER = 3_000  # accepted publishes before the kill
PUBLISHERS = 32  # concurrent HTTP clients (an acks=all produce waits for two replicas: concurrency is throughput)
PARTITIONS = 6  # two publish partitions led by each broker, more or less
# A 503 is allowed only in this window after the kill: the dead broker is fenced after
# broker.session.timeout.ms (4 s on LocalKafkaCluster), a produce waits up to 4 s.
REELECTION_WINDOW_S = 30.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafkaCluster]:
    nodes = LocalKafkaCluster(tmp_path_factory.mktemp("cluster"), nodes=3)
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.stop()


class Publishes:
    """10,000 publishes from a few threads; each outcome kept by the publisher's event id, no retries."""

    def __init__(self, stack: Stack, topic: str) -> None:
        self.stack, self.topic = stack, topic
        self._next = itertools.count()
        self._lock = threading.Lock()
        self.accepted: dict[str, str] = {}  # publisher event id -> server event id
        self.refused: dict[str, float] = {}  # publisher event id -> when the 503 came (monotonic)
        self.other: list[str] = []  # anything else: fails the test
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(PUBLISHERS)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        assert not any(t.is_alive() for t in self.threads), "publishers did not finish in time"

    def _run(self) -> None:
        with self.stack.client() as client:
            while (i := next(self._next)) < TOTAL:
                ev = f"c-{i}"
                body = {"status": "ACTUAL", "data": {"i": i}, "event": {"id": ev, "name": f"event {i}"}}
                try:
                    r = client.post(f"/workflow_topics/{self.topic}/publish", json=body)
                except httpx.HTTPError as exc:
                    self.other.append(f"{ev}: {exc!r}")
                    continue
                if r.status_code == 202:
                    self.accepted[ev] = r.json()["id"]
                elif r.status_code == 503:
                    self.refused[ev] = time.monotonic()
                else:
                    self.other.append(f"{ev}: {r.status_code} {r.text[:200]}")


async def topic_replication(bootstrap: str, prefix: str) -> dict[str, tuple[int, str]]:
    """Replicas per partition and min.insync.replicas of the topics named ``prefix...``, and the offsets'."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        names = [t for t in await admin.list_topics() if t.startswith(prefix) or t == "__consumer_offsets"]
        replicas = {
            t["topic"]: {len(p["replicas"]) for p in t["partitions"]} for t in await admin.describe_topics(names)
        }
        responses = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t) for t in names])
        # each resource: (error code, message, type, name, [(config name, value, ...), ...])
        isr = {res[3]: dict(c[:2] for c in res[4])["min.insync.replicas"] for r in responses for res in r.resources}
    finally:
        await admin.close()
    return {t: (max(replicas[t]) if len(replicas[t]) == 1 else -1, isr[t]) for t in names}


def control_decisions(db: Path) -> dict[str, list[str]]:
    """Server event id -> the decisions its trace records (the worker's control step)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        rows = conn.execute("SELECT event_id, detail FROM event_trace_steps WHERE step = 'control'").fetchall()
    found: dict[str, list[str]] = {}
    for event_id, detail in rows:
        found.setdefault(event_id, []).append(json.loads(detail)["decision"])
    return found


def timeline_entries(db: Path) -> list[tuple[str, str]]:
    """(server event id of the incident, entry kind) for every incident timeline entry."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        rows = conn.execute(
            "SELECT i.server_event_id, e.kind FROM incident_events e JOIN incidents i ON i.id = e.incident_id"
        ).fetchall()
    return [(str(e), str(k)) for e, k in rows]


def test_broker_kill_9_during_10k_publishes_keeps_every_accepted_event(
    cluster: LocalKafkaCluster, tmp_path: Path
) -> None:
    started = time.monotonic()
    env = {
        "TOCSIN_REPLICATION_FACTOR": "3",
        "TOCSIN_MIN_INSYNC_REPLICAS": "2",
        "TOCSIN_PUBLISH_RATE_PER_SECOND": "1000000",  # the limiter is not under test here
        "TOCSIN_PUBLISH_BURST": "1000000",
    }
    stack = Stack(tmp_path / "stack", cluster.bootstrap, partitions=PARTITIONS, extra_env=env)
    try:
        stack.start()
        with stack.client() as client:
            setup_topic(client, "quake", {"type": "BYPASS"})
            publish_topic = stack.env["TOCSIN_TOPIC_PREFIX"] + "publish"
            leaders = cluster.leaders([publish_topic])
            assert len(leaders) == PARTITIONS
            # the pipeline answers before the load (a TEST event: no incident from the ACTUAL workflow)
            assert client.post("/workflow_topics/quake/publish", json={"status": "TEST", "data": {}}).status_code == 202

            publishes = Publishes(stack, "quake")
            load_started = time.monotonic()
            publishes.start()
            wait_for(lambda: len(publishes.accepted) >= KILL_AFTER, 120, f"{KILL_AFTER} accepted publishes", 0.01)
            by_leader = Counter(leaders.values())
            victim = max(sorted(by_leader), key=lambda node: by_leader[node])
            led = sorted(p for (_, p), node in leaders.items() if node == victim)
            cluster.kill_node(victim)
            killed_at, accepted_at_kill = time.monotonic(), len(publishes.accepted)

            def moved() -> bool:
                try:
                    now = cluster.leaders([publish_topic])
                except KafkaError:  # asked the dead node, which the metadata still lists: ask again
                    return False
                return all(node not in (victim, -1) for node in now.values())

            wait_for(moved, 60, f"new leaders for node {victim}'s partitions", 0.2)
            reelected_s = time.monotonic() - killed_at
            publishes.join(240)
            load_s = time.monotonic() - load_started
            assert publishes.other == [], publishes.other[:5]
            sent_after_kill = len(publishes.accepted) - accepted_at_kill
            assert sent_after_kill > 0, "the load ended before the kill: it was not partway"

            restart_started = time.monotonic()
            cluster.restart_node(victim)
            restart_s = time.monotonic() - restart_started
            # every topic the project created, and the consumer offsets, on three replicas, two in sync to write
            prefix = stack.env["TOCSIN_TOPIC_PREFIX"]
            replication = run_coro_sync(partial(topic_replication, cluster.bootstrap, prefix))
            assert len(replication) >= 10 and set(replication.values()) == {(3, "2")}, replication

            accepted = publishes.accepted
            server_ids = set(accepted.values())
            assert len(server_ids) == len(accepted)
            db = stack.var_dir / "tocsin.db"

            def all_decided() -> tuple[dict[str, list[str]], list[dict[str, Any]]] | None:
                decisions = control_decisions(db)
                if not server_ids <= decisions.keys():
                    return None
                incidents = all_incidents(client)
                stored = {i["server_event_id"] for i in incidents}
                return (decisions, incidents) if server_ids <= stored else None

            try:  # 480 s: CI's runs this stop took 19.5, 22 and 25 min as the machine slowed (240 s ran out once)
                wait_for(all_decided, 480, f"decisions and incidents of {len(accepted)} events", 2)
            except AssertionError:  # how many are missing, not only that some are
                undecided = server_ids - control_decisions(db).keys()
                without_incident = server_ids - {i["server_event_id"] for i in all_incidents(client)}
                raise AssertionError(
                    f"of {len(server_ids)} accepted events, {len(undecided)} undecided (e.g. {sorted(undecided)[:3]}), "
                    f"{len(without_incident)} without an incident"
                ) from None
            # Complete: listen a little for late duplicates, then count every effect.
            decisions, incidents = listen(lambda: (control_decisions(db), all_incidents(client)))
            entries = timeline_entries(db)
    finally:
        stack.stop()

    per_event = Counter(i["server_event_id"] for i in incidents)
    # A second effect for an event is not a second incident (same event.id: a timeline update):
    # count every timeline entry and every ``updated=`` of the sink, and every decision a worker
    # logged (the trace keeps one row per step: a record decided again, differently, hides there).
    second_effects = Counter(entries) - Counter({(e, "CREATED"): 1 for e in per_event})
    updated = sink_totals(stack.worker_logs)["updated"]
    duplicates = sum(n - 1 for n in per_event.values() if n > 1) + sum(second_effects.values()) + updated
    logged = decision_lines(stack.worker_logs)
    decided_again = sum(1 for e in server_ids if len(logged.get(e, [])) > 1)
    lost = len(server_ids - decisions.keys()) + len(server_ids - per_event.keys())
    lost += len(server_ids - logged.keys())
    wrong = {e: d for e, d in decisions.items() if e in server_ids and d != ["NOTIFY"]}
    wrong.update({e: d for e, d in logged.items() if e in server_ids and set(d) != {"NOTIFY"}})
    by_publisher_id = {i["event_id"]: i for i in incidents}
    # a 503 means "not known to be stored": the record may still have been written (produce timed out)
    refused_but_stored = sum(1 for ev in publishes.refused if ev in by_publisher_id)
    unknown = {i["server_event_id"] for i in incidents} - server_ids
    refused_after = sorted(t - killed_at for t in publishes.refused.values())
    print(
        f"\nbrokers: 3 (replication factor 3, min.insync.replicas 2), publish partitions {PARTITIONS}, "
        f"{PUBLISHERS} publishers"
        f"\npublishes sent {TOTAL}, accepted {len(accepted)}, refused (503) {len(publishes.refused)}"
        + (f" from +{refused_after[0]:.1f}s to +{refused_after[-1]:.1f}s after the kill" if refused_after else "")
        + f"\nkill -9 node {victim} (leader of publish partitions {led}) after {accepted_at_kill} accepted, "
        f"{killed_at - load_started:.1f}s into the load; its partitions had new leaders after {reelected_s:.1f}s; "
        f"{sent_after_kill} accepted after the kill; node back in {restart_s:.1f}s after the load"
        f"\ndecisions found {sum(len(d) for e, d in decisions.items() if e in server_ids)} "
        f"(all NOTIFY: {not wrong}), decided again the same way {decided_again}, incidents {len(incidents)}, "
        f"timeline entries {len(entries)}, sink updates {updated}, duplicates {duplicates}, lost {lost}; "
        f"refused publishes stored anyway {refused_but_stored}"
        f"\nload {load_s:.1f}s ({TOTAL / load_s:.0f} publishes/s), test {time.monotonic() - started:.1f}s"
    )
    assert lost == 0
    assert duplicates == 0
    assert wrong == {}
    # incidents beyond the accepted events come only from publishes that got a 503
    assert len(unknown) == refused_but_stored
    assert all(0 <= t <= REELECTION_WINDOW_S for t in refused_after), refused_after
