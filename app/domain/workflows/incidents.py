"""Incidents' episode rules: what an incident action (a RUN_OPERATION_BOOK effect) does to the
incident it finds — one per workflow and control episode (``episode_key``), or per workflow and
publisher ``event.id`` for single events (the store finds only open ones there)."""

from __future__ import annotations

from enum import StrEnum

STATUSES = ("OPEN", "ACKNOWLEDGED", "RESOLVED")
# What the source's status changes change an incident from: an acknowledge only an OPEN one, a
# resolve any that is not RESOLVED. Each is one conditional write (the incident still in one of
# these statuses), so of concurrent changes to the same incident exactly one applies.
SOURCE_CHANGES_FROM = {"ACKNOWLEDGED": ("OPEN",), "RESOLVED": ("OPEN", "ACKNOWLEDGED")}


def changes_from(status: str) -> tuple[str, ...]:
    """What a person's change to ``status`` changes an incident from: any other status (a change to
    the status it already has is no change, and adds nothing to its timeline)."""
    return tuple(s for s in STATUSES if s != status)


class IncidentStep(StrEnum):
    CREATE = "CREATE"  # no incident yet: the NOTIFY opens one
    UPDATE = "UPDATE"  # a later NOTIFY of the same incident: a timeline entry
    FOLLOW_UP = "FOLLOW_UP"  # a NOTIFY after the incident was resolved: a new one, linked from the old one's timeline
    RELEASE = "RELEASE"  # the episode's RESOLVE: the incident is RESOLVED, with the reason in its timeline
    NOTHING = "NOTHING"  # a RESOLVE without an incident (the workflow ran no NOTIFY of the episode)
    ACKNOWLEDGE = "ACKNOWLEDGE"  # the source's acknowledge of an OPEN incident: ACKNOWLEDGED


def incident_step(decision: str, found_status: str | None) -> IncidentStep:
    """The step for an action with ``decision`` given the status of the incident found (None: none).

    A NOTIFY never goes into a RESOLVED incident, whoever resolved it (a person, or the API when
    the topic's policy type changed): the episode goes on, so it opens a new incident, and the
    old one's timeline links to it; later actions of the episode go to the newest incident."""
    if decision == "RESOLVE":
        return IncidentStep.NOTHING if found_status is None else IncidentStep.RELEASE
    if decision == "ACKNOWLEDGE":  # only an OPEN incident: an acknowledged or resolved one stays as it is
        return IncidentStep.ACKNOWLEDGE if found_status == "OPEN" else IncidentStep.NOTHING
    if found_status is None:
        return IncidentStep.CREATE
    return IncidentStep.FOLLOW_UP if found_status == "RESOLVED" else IncidentStep.UPDATE
