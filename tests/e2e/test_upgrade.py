"""Upgrade in place: an installation running the previous release (Faust agents and tables) is
stopped and started on this code, on the same broker, topics, changelogs, worker data directory,
consumer groups and database. Its open METRIC episodes, SET values and idempotency keys carry on,
no decision differs from the spec's table, no episode notifies twice, and what the previous
release accepted but never decided is decided by the new one."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_event_control import decision_of, incidents_when, publish, timeline, trace_of
from tests.e2e.test_partitions import publish_with_key
from tests.support.effects import listen
from tests.support.scaling import METRIC_PROFILE, spec_decisions
from tests.support.stack import ROOT, Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

# The last commit of the release before the batch engine: its worker ran the control and idempotency
# agents on Faust tables, and the sinks and delivery agents in the Faust consumer group.
PREVIOUS_RELEASE = "d034466"

# Before the upgrade each key's episode is open. HOLD keys have two of the three values below the
# threshold the release needs; PEAK keys hold a peak of 15 (and get one more 15 while no worker
# runs: accepted by the old API, decided by the new worker).
HOLD = {f"st-{i}": [15.0, 12.0, 3.0, 2.0] for i in range(4)}
PEAK = {f"pk-{i}": [15.0, 12.0] for i in range(4)}
WHILE_STOPPED = {k: [15.0] for k in PEAK}
# After it: one more low value releases a HOLD episode; a PEAK key's higher value notifies the same
# episode, and three low values release it.
AFTER = {**{k: [1.0] for k in HOLD}, **{k: [16.0, 3.0, 2.0, 1.0] for k in PEAK}}
IDEMPOTENCY_KEYS = [f"k-{i}" for i in range(6)]


@pytest.fixture(scope="module")
def previous_release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The previous release's code, from this repository's history (its dependencies are this
    checkout's: every package the release pinned is pinned alike here; packages added since, such
    as fastapi-offline for the API's own docs pages, are only installed beside it)."""
    target = tmp_path_factory.mktemp("previous-release")
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", PREVIOUS_RELEASE], capture_output=True, check=False
    )
    assert archive.returncode == 0, f"the previous release {PREVIOUS_RELEASE} is not in the history: {archive.stderr!r}"
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    for lock in ("requirements.lock", "requirements-dev.lock"):
        released, current = _pins(target / lock), _pins(ROOT / lock)
        changed = {name: pin for name, pin in released.items() if current.get(name) != pin}
        assert not changed, f"{lock}: the release's pins changed since: {changed}"
    yield target


def _pins(lock: Path) -> dict[str, str]:
    """``name → version`` of every package a lock file pins (``name==version``, hashes aside)."""
    pins = {}
    for line in lock.read_text().splitlines():
        head = line.split(" ", 1)[0].strip()
        if "==" in head and not line.startswith((" ", "#")):
            name, version = head.split("==", 1)
            pins[name.lower()] = version.rstrip("\\").strip()
    return pins


def test_an_installation_of_the_previous_release_upgrades_in_place(
    stack_factory: Callable[..., Stack], previous_release: Path
) -> None:
    # Transactional publishes, as an installation may run them: commit markers between the records.
    stack = stack_factory(partitions=2, extra_env={"TOCSIN_PUBLISH_TRANSACTIONS": "true"})
    stack.root = previous_release
    stack.start()
    before = {**HOLD, **PEAK}
    with stack.client() as client:
        setup_topic(client, "river", METRIC_PROFILE)
        setup_topic(client, "areas", {"type": "SET"})
        sent = {k: [publish(client, "river", k, metrics={"level": v}) for v in values] for k, values in before.items()}
        areas = publish(client, "areas", "pref-1", areas=["a", "b"])
        firsts = {key: publish_with_key(client, f"id-{n}", key) for n, key in enumerate(IDEMPOTENCY_KEYS)}
        for k, values in before.items():
            assert [decision_of(client, e) for e in sent[k]] == spec_decisions(values), k
        assert decision_of(client, areas) == "NOTIFY"
        assert all(trace_of(client, e)["idempotency"]["outcome"] == "first" for e in firsts.values())
        incidents = {i["server_event_id"]: i for i in incidents_when(client, len(before) + 1)}
        episode = {k: incidents[sent[k][0]]["id"] for k in before}

        # The worker stops; the API still accepts: these are decided by the new release only.
        stack.stop_worker()
        accepted = {
            k: [publish(client, "river", k, metrics={"level": v}) for v in vs] for k, vs in WHILE_STOPPED.items()
        }
        late_first = publish_with_key(client, "id-late", "k-late")
    stack.stop_api()

    # The new release on the same data.
    stack.root = ROOT
    stack.start_api()
    stack.start_worker()
    stack.wait_worker_ready()
    with stack.client() as client:
        for k, events in accepted.items():
            expected = spec_decisions(before[k] + WHILE_STOPPED[k])[len(before[k]) :]
            assert [decision_of(client, e, timeout=120) for e in events] == expected, k
        assert trace_of(client, late_first, timeout=120)["idempotency"]["outcome"] == "first"

        after = {k: [publish(client, "river", k, metrics={"level": v}) for v in vs] for k, vs in AFTER.items()}
        for k, values in AFTER.items():
            history = before[k] + WHILE_STOPPED.get(k, [])
            expected = spec_decisions(history + values)[len(history) :]
            assert [decision_of(client, e, timeout=120) for e in after[k]] == expected, k
        # The SET value carried over: the same members are no news, a new one is.
        assert decision_of(client, publish(client, "areas", "pref-1", areas=["b", "a"])) == "SUPPRESS"
        assert decision_of(client, publish(client, "areas", "pref-1", areas=["a", "c"])) == "NOTIFY"
        # Idempotency keys written by the previous release still deduplicate, whatever the partition key.
        for n, key in enumerate(IDEMPOTENCY_KEYS):
            repeat = trace_of(client, publish_with_key(client, f"other-{n}", key))["idempotency"]
            assert repeat["outcome"] == "duplicate" and repeat["duplicate_of"] == firsts[key], (key, repeat)
        repeat = trace_of(client, publish_with_key(client, "id-late-again", "k-late"))["idempotency"]
        assert repeat["outcome"] == "duplicate" and repeat["duplicate_of"] == late_first, repeat

        # The same episodes: no new incident; each METRIC episode's NOTIFYs once on its timeline, released.
        found = listen(lambda: all_incidents(client))
        assert len(found) == len(before) + 1, "an incident opened or lost across the upgrade"

        def released() -> list[dict[str, Any]] | None:
            metric = [i for i in all_incidents(client) if i["id"] in episode.values()]
            return metric if all(i["status"] == "RESOLVED" for i in metric) else None

        wait_for(released, 60, "every METRIC episode released")
        for k in before:
            decisions = spec_decisions(before[k] + WHILE_STOPPED.get(k, []) + AFTER[k])
            kinds = [e["kind"] for e in timeline(client, episode[k])]
            assert kinds == ["CREATED"] + ["UPDATED"] * (decisions.count("NOTIFY") - 1) + ["RESOLVED"], (k, kinds)
