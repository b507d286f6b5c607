"""Incidents of control episodes: what a batch of incident actions (RUN_OPERATION_BOOK effects)
does — create, update, resolve, reopen as a follow-up — given the incidents the store found.
The store persists the plan and decides nothing (app/store/results.py).

One incident per workflow and control episode (``episode_key``): the NOTIFY that opens an
episode creates it, a later NOTIFY adds a timeline entry, RESOLVE marks it RESOLVED; a NOTIFY
after the incident was resolved (by a person) opens a new one, linked from the old one's
timeline (``FOLLOWED_UP``), and the episode's later actions go to the new one. An action goes
by when it was accepted, not by when it arrives: Faust may hand the sink a record again after
later ones of its key (a fetch that skipped it, a rebalance), so a NOTIFY accepted before the
incident's opening action becomes its opener (the incident takes its event, title and time), and
one accepted before the incident was resolved is a late entry of it, not a follow-up. A RESOLVE
may even arrive before the episode's every NOTIFY: it finds no incident, so the episode is
remembered as ended (:class:`EndedEpisode`, stored), and its NOTIFY arriving afterwards opens the
incident already RESOLVED by that RESOLVE (its entry and reason), not one nothing would resolve.
Every NOTIFY of an episode was accepted before its RESOLVE (the control stage ends the episode with
it; a later NOTIFY has the next episode's key). Single events
(BYPASS, DELTA) create one each, or update the open incident of the same publisher ``event.id``.
Each effect id becomes a timeline entry id, so an effect seen before (a redelivery after a
worker restart) is counted as a duplicate and changes nothing.

The plan is made from incidents read before it is stored, and others may change them meanwhile (a
person's PATCH, another sink batch): each acknowledge or resolve of an incident read from the store
is therefore a :class:`StatusChange` the store makes as one conditional write, and a change that
finds its incident no longer in a status it changes from did what the same action does after that
change (:func:`lose_change`): a source's resolve or acknowledge then found nothing open, so of
concurrent resolves exactly one resolves the incident and writes the timeline entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.domain.workflows.incidents import SOURCE_CHANGES_FROM, IncidentStep, incident_step


@dataclass(frozen=True, slots=True)
class FoundIncident:
    """An incident as the rules need it: its id and status, when its opening action was accepted
    and when it was resolved (milliseconds; None: not resolved, or not known), and the incident
    of its episode before it (a follow-up's; None: the first)."""

    id: str
    status: str
    created_ms: int = 0
    resolved_ms: int | None = None
    previous: FoundIncident | None = None


@dataclass(frozen=True, slots=True)
class EndedEpisode:
    """An episode's RESOLVE that found no incident of its workflow (its NOTIFY had not reached the
    sink): its effect id, event id, accepted time (milliseconds) and timeline message, kept until
    the NOTIFY comes and opens the incident RESOLVED with them."""

    effect_id: str
    server_event_id: str
    resolved_ms: int
    message: str


@dataclass(frozen=True, slots=True)
class StatusChange:
    """An effect's change of an incident read from the store to ``status`` (ACKNOWLEDGED or
    RESOLVED) at ``at_ms``, made only if the incident is still in one of ``from_statuses``, and what
    the effect did if it is not (``lost``: its outcome, its timeline entry dropped; None: the
    effect stands without the change — an episode's release is recorded on an incident a person
    resolved, as when it arrives after that person)."""

    effect_id: str
    incident_id: str
    status: str
    at_ms: int
    from_statuses: tuple[str, ...]
    lost: str | None


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One entry of an incident's timeline; its id is the effect's (or the link's) id."""

    id: str
    incident_id: str
    kind: str  # CREATED | UPDATED | ACKNOWLEDGED | RESOLVED | FOLLOWED_UP
    message: str
    server_event_id: str
    at_ms: int


@dataclass(slots=True)
class EpisodePlan:
    """What to persist for a batch: the incidents to create (their id and the action opening
    each), the incidents whose opening action is an earlier one that arrived late (id → that
    action), the incidents to mark RESOLVED (id → when; created ones included), the timeline
    entries in order, the episodes to remember as ended without an incident ((episode, workflow)
    → its RESOLVE) and those to forget (their incident was created by this plan, RESOLVED: it
    keeps the end from now on), the changes of incidents read from the store (each a conditional
    write), and the counts the sink reports."""

    created: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    reopened_by: dict[str, dict[str, Any]] = field(default_factory=dict)
    resolved: dict[str, int] = field(default_factory=dict)
    acknowledged: dict[str, int] = field(default_factory=dict)  # id → when the source acknowledged it
    # effect id → what it did (created, updated, acknowledged, resolved, nothing open, duplicate…):
    # the incident sink's step in the event's trace
    effects: dict[str, str] = field(default_factory=dict)
    entries: list[TimelineEntry] = field(default_factory=list)
    changes: list[StatusChange] = field(default_factory=list)
    ended: dict[tuple[str, str], EndedEpisode] = field(default_factory=dict)
    forget: set[tuple[str, str]] = field(default_factory=set)
    updated: int = 0
    duplicates: int = 0


def episode_keys(actions: Iterable[dict[str, Any]]) -> set[str]:
    """The episodes whose incidents the store must find for ``actions`` (all, resolved ones too)."""
    return {a["episode_key"] for a in actions if a.get("episode_key")}


def publisher_event_ids(actions: Iterable[dict[str, Any]]) -> set[str]:
    """The publisher ``event.id``s of the single events among ``actions``, whose OPEN incidents
    (outside any episode) the store must find."""
    return {a["publisher_event_id"] for a in actions if a.get("publisher_event_id") and not a.get("episode_key")}


def source_partition_keys(actions: Iterable[dict[str, Any]]) -> set[str]:
    """The partition keys of the single events' resolves and acknowledges that carry no publisher
    ``event.id``: they name the open incident (of no ``event.id``) by its partition key."""
    return {
        a["partition_key"]
        for a in actions
        if a.get("decision") in _BY_SOURCE and a.get("partition_key") and not a.get("publisher_event_id")
    }


_BY_SOURCE = ("RESOLVE", "ACKNOWLEDGE")


def source_key(action: dict[str, Any]) -> str | None:
    """What names a single event's incident: the publisher's ``event.id``; for a resolve or an
    acknowledge without one, its partition key (API.md: "else partition key")."""
    publisher_id = action.get("publisher_event_id")
    if publisher_id or action.get("decision") not in _BY_SOURCE:
        return str(publisher_id) if publisher_id else None
    key = action.get("partition_key")
    return str(key) if key else None


def plan_incident_actions(
    actions: Sequence[dict[str, Any]],
    seen: set[str],
    by_episode: dict[tuple[str, str], FoundIncident],
    open_by_event: dict[tuple[str, str], FoundIncident],
    ended: Mapping[tuple[str, str], EndedEpisode] | None = None,
) -> EpisodePlan:
    """The plan for ``actions``, in order: ``seen`` are the effect ids already in a timeline,
    ``by_episode`` the newest incident of each (episode, workflow), ``open_by_event`` the open
    incident of each (workflow, publisher event id) of a single event, ``ended`` the episodes
    (episode, workflow) whose RESOLVE came with no incident. Actions of the batch see what the
    earlier ones did (an incident created, or resolved, an episode ended, by an earlier action)."""
    plan = EpisodePlan()
    seen, created = set(seen), set[str]()
    by_episode, open_by_event, ended = dict(by_episode), dict(open_by_event), dict(ended or {})
    for action in actions:
        eff = action["effect_id"]
        if eff in seen:
            plan.duplicates += 1
            plan.effects.setdefault(eff, "duplicate: applied before")
            continue
        seen.add(eff)
        at_ms = int(action["accepted_ms"])
        publisher_id = source_key(action)
        episode = action.get("episode_key")
        wf = action["workflow_id"]
        found_in, found_key = (by_episode, (episode, wf)) if episode else (open_by_event, (wf, publisher_id or ""))
        incident = found_in.get(found_key) if episode or publisher_id else None
        late = _late_home(incident, at_ms) if episode and incident is not None else None
        if late is not None and action.get("decision", "NOTIFY") == "NOTIFY":
            home, opens = late
            if opens:  # the incident's opening action: it takes this one's event, title and time
                plan.reopened_by[home.id] = action
                assert incident is not None
                found_in[found_key] = _retimed(incident, home.id, at_ms)
            plan.entries.append(_entry(eff, home.id, "UPDATED", _update_message(action), action))
            plan.updated += 1
            plan.effects[eff] = f"updated {home.id}"
            continue
        step = incident_step(action.get("decision", "NOTIFY"), incident.status if incident is not None else None)
        if step is IncidentStep.ACKNOWLEDGE and incident is not None:
            plan.acknowledged[incident.id] = at_ms
            _change(plan, created, eff, incident.id, "ACKNOWLEDGED", at_ms, "nothing open to acknowledge")
            found_in[found_key] = replace(incident, status="ACKNOWLEDGED")
            plan.entries.append(_entry(eff, incident.id, "ACKNOWLEDGED", _reason(action), action))
            plan.updated += 1
            plan.effects[eff] = f"acknowledged {incident.id}"
            continue
        if step is IncidentStep.NOTHING and action.get("decision") == "ACKNOWLEDGE":
            plan.effects[eff] = "nothing open to acknowledge"
            continue
        if step is IncidentStep.NOTHING:  # a RESOLVE before any NOTIFY of its episode reached the sink
            plan.effects[eff] = "nothing open to resolve"
            if episode and found_key not in ended:
                ended[found_key] = plan.ended[found_key] = EndedEpisode(
                    eff, action["event_id"], at_ms, _released(action)
                )
                plan.effects[eff] = "no incident yet: the episode is remembered as ended"
            continue
        if step is IncidentStep.RELEASE and incident is not None:
            if incident.status != "RESOLVED":
                plan.resolved[incident.id] = at_ms
                lost = None if episode else "nothing open to resolve"  # an episode's release stands (StatusChange)
                _change(plan, created, eff, incident.id, "RESOLVED", at_ms, lost)
                found_in[found_key] = replace(incident, status="RESOLVED", resolved_ms=at_ms)
            if not episode:  # the store finds a single event's open incident only: a later resolve finds nothing
                del found_in[found_key]
            plan.entries.append(_entry(eff, incident.id, "RESOLVED", _released(action), action))
            plan.updated += 1
            plan.effects[eff] = f"resolved {incident.id}"
            continue
        if step is IncidentStep.UPDATE and incident is not None:
            plan.entries.append(_entry(eff, incident.id, "UPDATED", _update_message(action), action))
            plan.updated += 1
            plan.effects[eff] = f"updated {incident.id}"
            continue
        new = FoundIncident("inc_" + eff.partition("_")[2], "OPEN", at_ms, previous=incident)
        plan.created.append((new.id, action))
        created.add(new.id)
        plan.effects[eff] = f"created {new.id}"
        if episode or publisher_id:
            found_in[found_key] = new
        plan.entries.append(_entry(eff, new.id, "CREATED", action["title"], action))
        end = ended.pop(found_key, None) if episode else None
        if end is not None:  # the episode's RESOLVE came first: the incident opens RESOLVED by it
            resolved_ms = max(end.resolved_ms, at_ms)
            plan.resolved[new.id] = resolved_ms
            found_in[found_key] = replace(new, status="RESOLVED", resolved_ms=resolved_ms)
            plan.entries.append(
                TimelineEntry(end.effect_id, new.id, "RESOLVED", end.message, end.server_event_id, resolved_ms)
            )
            seen.add(end.effect_id)
            if plan.ended.pop(found_key, None) is None:  # stored by an earlier batch: no longer needed
                plan.forget.add(found_key)
        if step is IncidentStep.FOLLOW_UP and incident is not None:  # the old incident's timeline links to the new one
            message = f"a NOTIFY after this incident was resolved opened {new.id}"
            plan.entries.append(_entry(_link_id(eff), incident.id, "FOLLOWED_UP", message, action))
    return plan


def _change(
    plan: EpisodePlan, created: set[str], eff: str, incident_id: str, status: str, at_ms: int, lost: str | None
) -> None:
    """Plan the change of an incident to ``status``; one the plan creates is stored with it (no
    one else has it yet)."""
    if incident_id not in created:
        plan.changes.append(StatusChange(eff, incident_id, status, at_ms, SOURCE_CHANGES_FROM[status], lost))


def lose_change(plan: EpisodePlan, change: StatusChange) -> None:
    """``change`` was not made: its incident had left the statuses it changes from (someone changed
    it since it was read). Its effect did what the same action does after that change: found
    nothing open (no timeline entry), or, for an episode's release, stands as recorded."""
    done = plan.acknowledged if change.status == "ACKNOWLEDGED" else plan.resolved
    done.pop(change.incident_id, None)
    if change.lost is None:
        return
    plan.effects[change.effect_id] = change.lost
    plan.entries = [e for e in plan.entries if e.id != change.effect_id]
    plan.updated -= 1


def _late_home(newest: FoundIncident, at_ms: int) -> tuple[FoundIncident, bool] | None:
    """Where an episode's action accepted at ``at_ms`` belongs when it arrives after later ones:
    the incident whose time it falls in, and whether it opens that incident (it was accepted before
    the incident's opening action); None when it is not late (accepted after the newest incident
    opened and, if that one is resolved, after it was: the rules of its decision apply)."""
    incident, newer = newest, None
    while at_ms < incident.created_ms and incident.previous is not None:
        incident, newer = incident.previous, incident
    if at_ms < incident.created_ms:
        return incident, True  # before the episode's first incident opened
    if incident.resolved_ms is not None and at_ms < incident.resolved_ms:
        return incident, False  # while it was open: a late entry of it
    if newer is not None:
        return newer, True  # after this one was resolved, before the next one opened: the next one's opener
    return None


def _retimed(incident: FoundIncident, target: str, created_ms: int) -> FoundIncident:
    """``incident`` (the newest of its episode) with ``target`` (it, or one before it) opened at ``created_ms``."""
    if incident.id == target or incident.previous is None:
        return replace(incident, created_ms=created_ms)
    return replace(incident, previous=_retimed(incident.previous, target, created_ms))


def _link_id(effect_id: str) -> str:
    """The id of the link entry a follow-up incident's effect adds to the old incident."""
    return "lnk_" + effect_id.partition("_")[2]


def _entry(effect_id: str, incident_id: str, kind: str, message: str, action: dict[str, Any]) -> TimelineEntry:
    return TimelineEntry(effect_id, incident_id, kind, message, action["event_id"], int(action["accepted_ms"]))


def _reason(action: dict[str, Any]) -> str:
    return str(action.get("reason") or action.get("decision", "")).strip()


def _released(action: dict[str, Any]) -> str:
    """The timeline message of an episode's RESOLVE."""
    return f"released: {action.get('reason') or 'resolved'}"


def _update_message(action: dict[str, Any]) -> str:
    reason = action.get("reason")
    return f"{action['title']} ({reason})" if reason and action.get("episode_key") else action["title"]
