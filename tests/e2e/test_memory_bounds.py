"""Bounded caches end to end (issue 18, item 3): a worker whose state cache holds 2 states, whose
due window holds 10 auto-resolve times and whose topic config cache holds 1 topic decides every
event as the spec's table says and fires every timer — evicted states are read back from
RocksDB, timers beyond the window are found by a scan of the table — and, with an expiry window
of 10 idempotency keys, still deletes every key once its retention has passed."""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx
import pytest

from tests.support.scaling import CYCLE, decision_lines, spec_decisions
from tests.support.scaling import METRIC_PROFILE as SPEC_METRIC_PROFILE
from tests.support.stack import Stack, wait_for
from tests.support.workflows import all_incidents, setup_topic

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.heavy]

STATE_CACHE, DUE_WINDOW, EXPIRY_WINDOW = 2, 10, 10
METRIC_KEYS, SET_KEYS, IDEMPOTENCY_KEYS = 12, 25, 60
_REMOVED = re.compile(r"idempotency: (\d+) keys past their retention removed")


def _publish(client: httpx.Client, topic: str, key: str, idempotency: str | None = None, **control: object) -> str:
    body: dict[str, object] = {
        "status": "ACTUAL",
        "data": {},
        "event": {"name": key},
        "event_control": {"partition_key": key, **control},
    }
    if idempotency is not None:
        body["attributes"] = {"idempotency_key": idempotency}
    r = client.post(f"/workflow_topics/{topic}/publish", json=body)
    assert r.status_code == 202, r.text
    event_id: str = r.json()["id"]
    return event_id


def _cache_metric(stack: Stack, name: str, cache: str) -> float:
    text = httpx.get(f"{stack.worker_urls[0]}/metrics", timeout=10).text
    match = re.search(rf'^{name}{{cache="{cache}"}} (\S+)$', text, re.M)
    assert match, f"no {name} for {cache}"
    return float(match.group(1))


def test_decisions_and_timers_hold_when_states_and_due_times_are_evicted(stack_factory: Callable[..., Stack]) -> None:
    stack = stack_factory(
        extra_env={
            "TOCSIN_CONTROL_STATE_CACHE_SIZE": str(STATE_CACHE),
            "TOCSIN_CONTROL_DUE_WINDOW_SIZE": str(DUE_WINDOW),
            "TOCSIN_CONFIG_CACHE_SIZE": "1",
            "TOCSIN_CONTROL_TICK_SECONDS": "0.5",
            "TOCSIN_IDEMPOTENCY_EXPIRY_WINDOW_SIZE": str(EXPIRY_WINDOW),
            "TOCSIN_IDEMPOTENCY_RETENTION_HOURS": "0.002",  # 7.2 s
        }
    ).start()
    with stack.client() as client:
        setup_topic(client, "river", SPEC_METRIC_PROFILE)
        setup_topic(client, "areas", {"type": "SET", "auto_resolve_duration": 0.05})  # 3 seconds
        # Round robin over the keys: between two records of a key, the others push its state out of
        # the cache (and the other topic pushes its config out), so each decision reads RocksDB.
        keys = [f"st-{i}" for i in range(METRIC_KEYS)]
        sent: dict[str, list[str]] = {k: [] for k in keys}
        for value in CYCLE:
            for key in keys:
                sent[key].append(_publish(client, "river", key, metrics={"level": value}))
        areas = [_publish(client, "areas", f"pref-{i}", areas=["a"]) for i in range(SET_KEYS)]

        every = [e for ids in sent.values() for e in ids] + areas
        decided = wait_for(
            lambda: (found := decision_lines(stack.worker_logs)) and all(e in found for e in every) and found,
            120,
            "a decision for every event",
        )
        expected = spec_decisions(CYCLE)
        for key, ids in sent.items():
            assert [decided[e] for e in ids] == [[d] for d in expected], key  # each decided once, as the spec says
        assert all(decided[e] == ["NOTIFY"] for e in areas)

        # One incident per episode, each released: the METRIC ones by their exit_stable_limit, the
        # SET ones by the auto-resolve timer, 25 due times through a window of 10.
        total = METRIC_KEYS + SET_KEYS
        released = wait_for(
            lambda: (
                len(found := all_incidents(client)) == total and all(i["status"] == "RESOLVED" for i in found) and found
            ),
            120,
            f"{total} incidents, all resolved",
        )
        assert len({i["server_event_id"] for i in released}) == total
        for i in range(SET_KEYS):
            state = client.get("/workflow_topics/areas/control_state", params={"partition_key": f"pref-{i}"}).json()
            assert state["last_decision"] == "RESOLVE" and state["auto_resolve_at"] is None, state

        # 60 idempotency keys over 4 partitions, 10 in the expiry window: every one is deleted once
        # its retention has passed (the later publishes, on every partition, trigger the expiry).
        for i in range(IDEMPOTENCY_KEYS):
            _publish(client, "river", "st-idem", metrics={"level": 1.0}, idempotency=f"k{i}")
        rounds = [0]

        def removed() -> int | None:
            rounds[0] += 1
            for j in range(8):  # new keys, spread over the partitions
                _publish(client, "river", "st-idem", metrics={"level": 1.0}, idempotency=f"t{rounds[0]}-{j}")
            text = "".join(log.read_text(errors="replace") for log in stack.worker_logs)
            count = sum(int(n) for n in _REMOVED.findall(text))
            return count if count >= IDEMPOTENCY_KEYS else None

        wait_for(removed, 90, f"the {IDEMPOTENCY_KEYS} idempotency keys to be removed", interval=1.0)

    # The bounds held, and were exceeded by the work: entries were evicted.
    assert _cache_metric(stack, "tocsin_cache_entries", "control_states") <= STATE_CACHE
    assert _cache_metric(stack, "tocsin_cache_evictions_total", "control_states") > 0
    assert _cache_metric(stack, "tocsin_cache_entries", "control_due_window") <= DUE_WINDOW
    assert _cache_metric(stack, "tocsin_cache_evictions_total", "control_due_window") > 0
    assert _cache_metric(stack, "tocsin_cache_entries", "worker_topic_configs") <= 1
    assert _cache_metric(stack, "tocsin_cache_max_entries", "idempotency_expiry_window") <= EXPIRY_WINDOW
    assert _cache_metric(stack, "tocsin_cache_entries", "idempotency_expiry_window") <= EXPIRY_WINDOW
    assert _cache_metric(stack, "tocsin_cache_evictions_total", "idempotency_expiry_window") > 0
