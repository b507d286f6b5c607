"""Incident lifecycle in the store (issue 14, defect 9): a NOTIFY after a person resolved the
episode's incident opens a new incident, linked from the old one's timeline, and the episode's
later actions go to the new one; concurrent resolves of one incident resolve it once; on SQLite
and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.domain.shared.milliseconds import datetime_to_ms
from app.domain.workflows.incidents import IncidentStep, changes_from, incident_step
from app.store import results
from app.store.db import create_engine, migrate_async, sessionmaker
from app.store.models import EndedEpisode, Incident, IncidentEvent
from tests.support.postgres_local import LocalPostgres


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    else:
        server: LocalPostgres = request.getfixturevalue("postgres")
        url = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    await migrate_async(url)
    eng = create_engine(url)
    yield eng
    await eng.dispose()


def _action(effect: str, decision: str, at_ms: int, episode: str = "ep_1") -> dict[str, Any]:
    return {
        "effect_id": f"act_{effect}",
        "event_id": f"evt_{effect}",
        "organization_id": "org_1",
        "topic_id": "wtp_1",
        "workflow_id": "wfl_1",
        "operation_book_id": "obk_1",
        "title": f"level {effect}",
        "mode": "ACTUAL",
        "decision": decision,
        "episode_key": episode,
        "reason": "3 consecutive values below threshold" if decision == "RESOLVE" else "new peak",
        "accepted_ms": 1_700_000_000_000 + at_ms,
        "publisher_event_id": None,
    }


def _single(effect: str, decision: str, at_ms: int, publisher: str | None, partition: str) -> dict[str, Any]:
    """A single event's (BYPASS) action, naming its incident by the publisher's ``event.id``."""
    reason = {"RESOLVE": "resolved by the source", "ACKNOWLEDGE": "acknowledged by the source"}.get(decision)
    return {
        **_action(effect, decision, at_ms, episode=""),
        "episode_key": None,
        "publisher_event_id": publisher,
        "partition_key": partition,
        "reason": reason,
    }


async def _timeline(session: Any, incident_id: str) -> list[tuple[str, str]]:
    rows = await session.scalars(
        select(IncidentEvent).where(IncidentEvent.incident_id == incident_id).order_by(IncidentEvent.created_at)
    )
    return [(e.kind, e.message) for e in rows]


async def test_a_notify_after_a_person_resolved_the_incident_opens_a_linked_new_one(engine: AsyncEngine) -> None:
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        await results.apply_incident_actions(session, [_action("a", "NOTIFY", 0)])
    async with sessions.begin() as session:
        [first] = (await session.scalars(select(Incident))).all()
        first.status = "RESOLVED"  # what PATCH …/incidents/{id} {"status": "RESOLVED"} does
        session.add(
            IncidentEvent(
                id="iev_person",
                incident_id=first.id,
                kind="RESOLVED",
                message="status RESOLVED",
                created_at=first.created_at,
            )
        )
    async with sessions.begin() as session:
        outcome = await results.apply_incident_actions(session, [_action("b", "NOTIFY", 1_000)])
    assert (outcome.created, outcome.updated) == (1, 0), "the NOTIFY was swallowed by the resolved incident"
    async with sessions.begin() as session:
        second = (await session.scalars(select(Incident).where(Incident.id != first.id))).one()
        assert second.status == "OPEN" and second.episode_key == "ep_1" and second.title == "level b"
        old = await _timeline(session, first.id)
        assert old[-1] == ("FOLLOWED_UP", f"a NOTIFY after this incident was resolved opened {second.id}")
        # The episode's later actions go to the new incident, and a redelivery changes nothing.
        again = await results.apply_incident_actions(
            session, [_action("b", "NOTIFY", 1_000), _action("c", "NOTIFY", 2_000), _action("d", "RESOLVE", 3_000)]
        )
    assert (again.created, again.updated, again.duplicates) == (0, 2, 1)
    async with sessions() as session:
        assert [k for k, _ in await _timeline(session, second.id)] == ["CREATED", "UPDATED", "RESOLVED"]
        assert len(await _timeline(session, first.id)) == len(old)
        assert (await session.get(Incident, second.id)).status == "RESOLVED"  # type: ignore[union-attr]


async def test_an_episodes_actions_arriving_out_of_order_make_one_incident_opened_by_the_first(
    engine: AsyncEngine,
) -> None:
    """Faust may hand the sink a record again after later ones of its key (a fetch that skipped it):
    the episode's opening NOTIFY arrives after a later NOTIFY opened the incident and the RESOLVE
    resolved it. Seen in tests/e2e/test_scaling.py: the late opener made a follow-up incident that
    stayed OPEN, and the episode had two. Before the fix this test failed the same way."""
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        await results.apply_incident_actions(session, [_action("b", "NOTIFY", 500), _action("c", "NOTIFY", 1_000)])
    async with sessions.begin() as session:
        await results.apply_incident_actions(session, [_action("d", "RESOLVE", 2_000)])
    async with sessions.begin() as session:
        opener = await results.apply_incident_actions(session, [_action("a", "NOTIFY", 0)])
        middle = await results.apply_incident_actions(session, [_action("e", "NOTIFY", 1_500)])
    assert (opener.created, opener.updated, middle.created, middle.updated) == (0, 1, 0, 1), "no follow-up"
    async with sessions() as session:
        [incident] = (await session.scalars(select(Incident))).all()
        assert (incident.status, incident.title, incident.server_event_id) == ("RESOLVED", "level a", "evt_a")
        assert [k for k, _ in await _timeline(session, incident.id)] == [
            "UPDATED",  # a: the opener, arrived last but one
            "CREATED",  # b
            "UPDATED",  # c
            "UPDATED",  # e: accepted before the RESOLVE, arrived after it
            "RESOLVED",  # d
        ]


async def test_a_resolve_arriving_before_its_episodes_only_notify_leaves_the_incident_resolved(
    engine: AsyncEngine,
) -> None:
    """Issue 30, item 2: the RESOLVE reached the sink first and found nothing to resolve, then the
    episode's only NOTIFY opened an incident nothing would resolve (before the fix: one incident,
    OPEN for ever). The ended episode is stored, so the NOTIFY opens it RESOLVED, in another
    transaction, after a redelivery of the RESOLVE too; a later late NOTIFY is an entry of it."""
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        await results.apply_incident_actions(session, [_action("d", "RESOLVE", 2_000)])
    async with sessions.begin() as session:  # the RESOLVE again (a redelivery): still nothing to resolve
        await results.apply_incident_actions(session, [_action("d", "RESOLVE", 2_000)])
    async with sessions.begin() as session:
        opener = await results.apply_incident_actions(session, [_action("a", "NOTIFY", 0)])
    async with sessions() as session:
        [incident] = (await session.scalars(select(Incident))).all()
        assert incident.status == "RESOLVED", "the episode's only incident is open, and nothing will resolve it"
    async with sessions.begin() as session:
        late = await results.apply_incident_actions(
            session, [_action("e", "NOTIFY", 1_500), _action("d", "RESOLVE", 2_000)]
        )
    assert (opener.created, late.created, late.updated, late.duplicates) == (1, 0, 1, 1)
    async with sessions() as session:
        [incident] = (await session.scalars(select(Incident))).all()
        assert (incident.status, incident.title) == ("RESOLVED", "level a"), "the incident stayed open"
        assert incident.resolved_at is not None and datetime_to_ms(incident.resolved_at) == 1_700_000_002_000
        assert await _timeline(session, incident.id) == [
            ("CREATED", "level a"),
            ("UPDATED", "level e (new peak)"),
            ("RESOLVED", "released: 3 consecutive values below threshold"),
        ]
        assert (await session.scalars(select(EndedEpisode))).all() == [], "the incident keeps the end now"


async def test_an_episodes_opener_arriving_after_a_later_notify_of_the_same_batch(engine: AsyncEngine) -> None:
    """A batch whose later NOTIFY opens the incident and whose opener comes after it: the plan
    makes the opener the incident's opening action. Before the fix the store failed the batch
    (KeyError: it looked for the incident among those found before the batch)."""
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        outcome = await results.apply_incident_actions(
            session, [_action("b", "NOTIFY", 500), _action("a", "NOTIFY", 0)]
        )
    assert (outcome.created, outcome.updated) == (1, 1)
    async with sessions() as session:
        [incident] = (await session.scalars(select(Incident))).all()
        assert (incident.status, incident.title, incident.server_event_id) == ("OPEN", "level a", "evt_a")
        assert datetime_to_ms(incident.created_at) == 1_700_000_000_000


async def test_single_events_acknowledged_and_resolved_by_their_source(engine: AsyncEngine) -> None:
    """Issue 33, item 1: a BYPASS trigger's incident is acknowledged, then resolved, by publishes of
    the same publisher key; one without an ``event.id`` names its incident by the partition key; a
    resolve that names nothing open changes nothing."""
    single = _single
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        await results.apply_incident_actions(
            session, [single("a", "NOTIFY", 0, "disk-full", "host-1"), single("b", "NOTIFY", 10, None, "host-2")]
        )
    async with sessions.begin() as session:
        await results.apply_incident_actions(session, [single("c", "ACKNOWLEDGE", 100, "disk-full", "host-1")])
    async with sessions() as session:
        status = {i.server_event_id: i.status for i in await session.scalars(select(Incident))}
        assert status == {"evt_a": "ACKNOWLEDGED", "evt_b": "OPEN"}
    async with sessions.begin() as session:
        outcome = await results.apply_incident_actions(
            session,
            [
                single("d", "RESOLVE", 200, "disk-full", "host-1"),
                single("e", "RESOLVE", 210, None, "host-2"),
                single("f", "RESOLVE", 220, "never-triggered", "host-3"),
            ],
        )
    assert (outcome.created, outcome.updated) == (0, 2)
    async with sessions() as session:
        rows = {i.server_event_id: i for i in await session.scalars(select(Incident))}
        assert {e: i.status for e, i in rows.items()} == {"evt_a": "RESOLVED", "evt_b": "RESOLVED"}
        assert rows["evt_a"].acknowledged_at is not None
        assert await _timeline(session, rows["evt_a"].id) == [
            ("CREATED", "level a"),
            ("ACKNOWLEDGED", "acknowledged by the source"),
            ("RESOLVED", "released: resolved by the source"),
        ]


@pytest.mark.parametrize("concurrent", [2, 5])
@pytest.mark.parametrize("decision", ["RESOLVE", "ACKNOWLEDGE"])
async def test_concurrent_resolves_of_one_incident_resolve_it_once(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch, decision: str, concurrent: int
) -> None:
    """The outside attack's defect: the source's resolve of a BYPASS trigger's incident, sent
    several times back to back, reached sink batches that each read the incident OPEN before any of
    them wrote, and every one resolved it: each traced ``resolved inc_…``, each a RESOLVED entry.
    The status change is one conditional write: exactly one resolves it and writes the entry, the
    others are traced "nothing open to resolve", as when they come after it. The same for the
    source's acknowledge. Failed before the fix (``concurrent`` entries and outcomes)."""
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        await results.apply_incident_actions(session, [_single("t", "NOTIFY", 0, "twice", "pk")])
    read, all_read = [0], asyncio.Event()
    open_incidents = results._open_incidents

    async def read_then_wait_for_the_others(session: Any, actions: Any) -> Any:
        found = await open_incidents(session, actions)
        read[0] += 1
        if read[0] == concurrent:
            all_read.set()
        await asyncio.wait_for(all_read.wait(), 10)  # every batch has read the incident OPEN before any writes
        return found

    monkeypatch.setattr(results, "_open_incidents", read_then_wait_for_the_others)

    async def store(i: int) -> str:
        async with sessions.begin() as session:
            outcome = await results.apply_incident_actions(
                session, [_single(f"r{i}", decision, 100 + i, "twice", "pk")]
            )
        return outcome.effects[f"act_r{i}"]

    outcomes = await asyncio.gather(*(store(i) for i in range(concurrent)))
    status, done, nothing = {
        "RESOLVE": ("RESOLVED", "resolved", "nothing open to resolve"),
        "ACKNOWLEDGE": ("ACKNOWLEDGED", "acknowledged", "nothing open to acknowledge"),
    }[decision]
    async with sessions() as session:
        [incident] = (await session.scalars(select(Incident))).all()
        assert incident.status == status
        assert [k for k, _ in await _timeline(session, incident.id)] == ["CREATED", status]
    assert sorted(outcomes) == sorted([f"{done} {incident.id}"] + [nothing] * (concurrent - 1))


async def test_a_release_after_a_person_resolved_the_incident_it_read_open(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person resolves an episode's incident after the sink read it OPEN for the episode's
    RESOLVE: the release does not change the incident again (its time stays the person's) and its
    entry stands, as when it arrives after the person's resolve."""
    sessions = sessionmaker(engine)
    async with sessions.begin() as session:
        await results.apply_incident_actions(session, [_action("a", "NOTIFY", 0)])
    by_person = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    episode_incidents = results._episode_incidents

    async def read_then_a_person_resolves(session: Any, actions: Any) -> Any:
        found = await episode_incidents(session, actions)
        async with sessions.begin() as person:
            [incident] = (await person.scalars(select(Incident))).all()
            assert await results.change_incident_status(
                person, incident.id, "RESOLVED", by_person, changes_from("RESOLVED")
            )
        return found

    monkeypatch.setattr(results, "_episode_incidents", read_then_a_person_resolves)
    async with sessions.begin() as session:
        outcome = await results.apply_incident_actions(session, [_action("d", "RESOLVE", 2_000)])
    async with sessions() as session:
        [incident] = (await session.scalars(select(Incident))).all()
        assert (incident.status, incident.resolved_at) == ("RESOLVED", by_person)
        assert [k for k, _ in await _timeline(session, incident.id)] == ["CREATED", "RESOLVED"]
    assert outcome.effects["act_d"] == f"resolved {incident.id}"


def test_incident_steps() -> None:
    assert incident_step("NOTIFY", None) is IncidentStep.CREATE
    assert incident_step("NOTIFY", "OPEN") is IncidentStep.UPDATE
    assert incident_step("NOTIFY", "ACKNOWLEDGED") is IncidentStep.UPDATE
    assert incident_step("NOTIFY", "RESOLVED") is IncidentStep.FOLLOW_UP
    assert incident_step("RESOLVE", "RESOLVED") is IncidentStep.RELEASE
    assert incident_step("RESOLVE", "OPEN") is IncidentStep.RELEASE
    assert incident_step("RESOLVE", None) is IncidentStep.NOTHING
