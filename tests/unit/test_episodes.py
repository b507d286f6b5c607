"""An episode's incident whatever order its actions reach the incident sink in (issue 30, item 2):
a RESOLVE that finds no incident is remembered (:class:`EndedEpisode`), so the episode's NOTIFY
arriving after it opens the incident already RESOLVED, instead of one that nothing resolves."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain.workflows.episodes import (
    EndedEpisode,
    EpisodePlan,
    FoundIncident,
    StatusChange,
    lose_change,
    plan_incident_actions,
)

KEY = ("ep1", "wf_all")


def _action(eff: str, decision: str, at: int, reason: str | None = None) -> dict[str, Any]:
    return {
        "effect_id": f"act_{eff}",
        "event_id": f"evt_{eff}",
        "workflow_id": "wf_all",
        "decision": decision,
        "episode_key": "ep1",
        "publisher_event_id": None,
        "title": "river level",
        "reason": reason,
        "accepted_ms": at,
    }


NOTIFY = _action("1", "NOTIFY", at=100)
RESOLVE = _action("3", "RESOLVE", at=300, reason="stable")
ENDED = EndedEpisode("act_3", "evt_3", 300, "released: stable")


def _outcome(plan: EpisodePlan) -> tuple[list[str], list[str], dict[str, int]]:
    return (
        [f"{e.kind} {e.incident_id} {e.id} {e.at_ms} {e.message}" for e in plan.entries],
        [i for i, _ in plan.created],
        plan.resolved,
    )


RESOLVED_INCIDENT = (
    ["CREATED inc_1 act_1 100 river level", "RESOLVED inc_1 act_3 300 released: stable"],
    ["inc_1"],
    {"inc_1": 300},
)

# (name, batches the sink gets in turn): each batch planned with what the earlier ones left
# (the incidents they created, the episodes they ended), as the store reads them back.
ORDERS = [
    ("NOTIFY then RESOLVE, one batch", [[NOTIFY, RESOLVE]]),
    ("RESOLVE then NOTIFY, one batch", [[RESOLVE, NOTIFY]]),
    ("NOTIFY then RESOLVE, two batches", [[NOTIFY], [RESOLVE]]),
    ("RESOLVE then NOTIFY, two batches", [[RESOLVE], [NOTIFY]]),
]


@pytest.mark.parametrize("batches", [b for _, b in ORDERS], ids=[n for n, _ in ORDERS])
def test_the_episodes_incident_ends_resolved_whichever_action_arrives_first(
    batches: list[list[dict[str, Any]]],
) -> None:
    entries: list[str] = []
    created: list[str] = []
    resolved: dict[str, int] = {}
    by_episode: dict[tuple[str, str], FoundIncident] = {}
    ended: dict[tuple[str, str], EndedEpisode] = {}
    for batch in batches:
        plan = plan_incident_actions(batch, set(), by_episode, {}, ended)
        got = _outcome(plan)
        entries += got[0]
        created += got[1]
        resolved.update(got[2])
        ended.update(plan.ended)
        for key in plan.forget:
            del ended[key]
        for incident_id, action in plan.created:  # what the store finds in the next batch
            by_episode[KEY] = FoundIncident(incident_id, "OPEN", int(action["accepted_ms"]))
        for incident_id, at_ms in plan.resolved.items():
            by_episode[KEY] = FoundIncident(incident_id, "RESOLVED", by_episode[KEY].created_ms, at_ms)
    assert ended == {}, "the episode is still remembered as ended with no incident"
    assert (sorted(entries), created, resolved) == (
        sorted(RESOLVED_INCIDENT[0]),
        RESOLVED_INCIDENT[1],
        RESOLVED_INCIDENT[2],
    )


def test_a_resolve_that_finds_no_incident_ends_its_episode() -> None:
    plan = plan_incident_actions([RESOLVE], set(), {}, {})
    assert (plan.entries, plan.created, plan.resolved) == ([], [], {})
    assert plan.ended == {KEY: ENDED}


def test_a_notify_of_an_ended_episode_opens_its_incident_resolved() -> None:
    plan = plan_incident_actions([NOTIFY], set(), {}, {}, {KEY: ENDED})
    assert _outcome(plan) == RESOLVED_INCIDENT
    assert plan.ended == {}  # the incident remembers the end from now on: a later NOTIFY is its late entry
    assert plan.forget == {KEY}


def test_the_episodes_later_notifies_are_entries_of_the_resolved_incident() -> None:
    second = _action("2", "NOTIFY", at=200, reason="peak")
    plan = plan_incident_actions([second, NOTIFY], set(), {}, {}, {KEY: ENDED})
    assert [(e.kind, e.incident_id) for e in plan.entries] == [
        ("CREATED", "inc_2"),
        ("RESOLVED", "inc_2"),
        ("UPDATED", "inc_2"),  # NOTIFY 1, accepted first: the opener
    ]
    assert plan.resolved == {"inc_2": 300} and plan.reopened_by == {"inc_2": NOTIFY}


def test_an_ended_episode_seen_again_is_not_ended_twice() -> None:
    """The RESOLVE again (a redelivery) while its NOTIFY has still not come: nothing new to store."""
    plan = plan_incident_actions([RESOLVE], set(), {}, {}, {KEY: ENDED})
    assert (plan.entries, plan.created, plan.ended) == ([], [], {})


def test_a_single_events_resolve_ends_nothing() -> None:
    single = {**RESOLVE, "episode_key": None, "publisher_event_id": "p1"}
    assert plan_incident_actions([single], set(), {}, {}).ended == {}


# The source's resolve and acknowledge of a single event's incident (issue 33, item 1): named by the
# publisher's event.id, else (a resolve or an acknowledge without one) by the partition key.


def _single(eff: str, decision: str, at: int, publisher: str | None, partition: str | None = "pk") -> dict[str, Any]:
    return {
        **_action(eff, decision, at),
        "episode_key": None,
        "publisher_event_id": publisher,
        "partition_key": partition,
        "reason": {"RESOLVE": "resolved by the source", "ACKNOWLEDGE": "acknowledged by the source"}.get(decision),
    }


def test_a_trigger_then_its_acknowledge_then_its_resolve_from_the_source() -> None:
    trigger = _single("1", "NOTIFY", 100, "disk-full")
    plan = plan_incident_actions([trigger], set(), {}, {})
    (created,) = [i for i, _ in plan.created]
    found = {("wf_all", "disk-full"): FoundIncident(created, "OPEN", 100)}
    ack, resolve = _single("2", "ACKNOWLEDGE", 200, "disk-full"), _single("3", "RESOLVE", 300, "disk-full")
    plan = plan_incident_actions([ack, resolve], set(), {}, found)
    assert plan.acknowledged == {created: 200} and plan.resolved == {created: 300}
    assert [(e.kind, e.message) for e in plan.entries] == [
        ("ACKNOWLEDGED", "acknowledged by the source"),
        ("RESOLVED", "released: resolved by the source"),
    ]


def test_a_resolve_without_an_event_id_names_the_incident_by_its_partition_key() -> None:
    found = {("wf_all", "pk"): FoundIncident("inc_x", "OPEN", 100)}
    plan = plan_incident_actions([_single("2", "RESOLVE", 200, None)], set(), {}, found)
    assert plan.resolved == {"inc_x": 200}


def test_a_resolve_or_an_acknowledge_that_names_nothing_open_changes_nothing() -> None:
    actions = [_single("2", "ACKNOWLEDGE", 200, "gone"), _single("3", "RESOLVE", 300, "gone")]
    plan = plan_incident_actions(actions, set(), {}, {})
    assert (plan.created, plan.resolved, plan.acknowledged, plan.entries, plan.ended) == ([], {}, {}, [], {})


def test_an_acknowledge_leaves_an_acknowledged_or_resolved_incident_as_it_is() -> None:
    found = {("wf_all", "x"): FoundIncident("inc_x", "ACKNOWLEDGED", 100)}
    plan = plan_incident_actions([_single("2", "ACKNOWLEDGE", 200, "x")], set(), {}, found)
    assert (plan.acknowledged, plan.entries) == ({}, [])


def test_an_episodes_acknowledge_from_the_source_acknowledges_its_incident() -> None:
    ack = {**_action("2", "ACKNOWLEDGE", 200), "reason": "acknowledged by the source"}
    plan = plan_incident_actions([ack], set(), {KEY: FoundIncident("inc_1", "OPEN", 100)}, {})
    assert plan.acknowledged == {"inc_1": 200} and plan.ended == {}
    plan = plan_incident_actions([ack], set(), {}, {})
    assert plan.ended == {}, "an acknowledge that finds no incident is not an end of the episode"


# The same resolve sent twice back to back (the outside attack's defect): one resolves, the other
# finds nothing open, in one batch as in two.


def test_the_same_resolve_twice_in_one_batch_resolves_the_incident_once() -> None:
    """Before the fix the second found the incident the first had resolved (the store finds only
    open incidents of single events, the plan kept it): ``resolved inc_x`` twice, two entries."""
    found = {("wf_all", "twice"): FoundIncident("inc_x", "OPEN", 100)}
    resolves = [_single("2", "RESOLVE", 200, "twice"), _single("3", "RESOLVE", 227, "twice")]
    plan = plan_incident_actions(resolves, set(), {}, found)
    assert plan.effects == {"act_2": "resolved inc_x", "act_3": "nothing open to resolve"}
    assert [(e.id, e.kind) for e in plan.entries] == [("act_2", "RESOLVED")]
    assert plan.resolved == {"inc_x": 200} and plan.updated == 1
    assert plan.changes == [
        StatusChange("act_2", "inc_x", "RESOLVED", 200, ("OPEN", "ACKNOWLEDGED"), "nothing open to resolve")
    ]


def test_a_trigger_after_its_resolve_in_one_batch_opens_a_new_incident() -> None:
    """As in two batches: the resolved incident is not found, so no follow-up link to it."""
    found = {("wf_all", "twice"): FoundIncident("inc_x", "OPEN", 100)}
    actions = [_single("2", "RESOLVE", 200, "twice"), _single("3", "NOTIFY", 300, "twice")]
    plan = plan_incident_actions(actions, set(), {}, found)
    assert [(e.incident_id, e.kind) for e in plan.entries] == [("inc_x", "RESOLVED"), ("inc_3", "CREATED")]


def test_a_change_lost_to_someone_elses_finds_nothing_open() -> None:
    """The store could not make the change (the incident changed since it was read): a source's
    resolve or acknowledge did nothing; an episode's release stands without changing it."""
    found = {("wf_all", "x"): FoundIncident("inc_x", "OPEN", 100)}
    for decision, lost in (("RESOLVE", "nothing open to resolve"), ("ACKNOWLEDGE", "nothing open to acknowledge")):
        plan = plan_incident_actions([_single("2", decision, 200, "x")], set(), {}, found)
        (change,) = plan.changes
        lose_change(plan, change)
        assert (plan.effects, plan.entries, plan.updated, plan.resolved, plan.acknowledged) == (
            {"act_2": lost},
            [],
            0,
            {},
            {},
        )
    plan = plan_incident_actions([RESOLVE], set(), {KEY: FoundIncident("inc_1", "OPEN", 100)}, {})
    (change,) = plan.changes
    lose_change(plan, change)
    assert plan.effects == {"act_3": "resolved inc_1"} and [e.kind for e in plan.entries] == ["RESOLVED"]


def test_an_incident_the_batch_creates_changes_without_a_conditional_write() -> None:
    plan = plan_incident_actions([NOTIFY, RESOLVE], set(), {}, {})
    assert plan.resolved == {"inc_1": 300} and plan.changes == []
