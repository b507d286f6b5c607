"""Topic sharing: which other organizations may receive a topic's events (and so see the topic
and subscribe workflows to it), by its ``access_scope`` and sharing flags (docs/api.md, "Shared
topics"). Pure.

- ``private``: only the owner.
- ``public``: every organization.
- ``restricted``: an organization the owner lists as a partner (``share_with_partner_orgs``) or
  as a license subscriber (``share_with_license_subscribers``), one in the topic's
  ``allowed_organization_ids`` (``share_with_allowed_orgs``), or a sibling — another child of
  the owner's parent (``share_with_sibling_orgs``). Relations are read from the owner's side:
  being listed by the owner is what counts.
- ``attributes.target_organization_ids`` on a publish narrows the receivers of that event to the
  listed organizations (among those allowed above); the owner's own workflows always run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class OrgRelations:
    id: str
    parent_id: str | None = None
    partner_ids: frozenset[str] = field(default_factory=frozenset)
    license_subscriber_ids: frozenset[str] = field(default_factory=frozenset)


def may_receive(topic: Mapping[str, Any], owner: OrgRelations, receiver: OrgRelations) -> tuple[bool, str]:
    """Whether ``receiver`` may receive the topic ``owner`` owns (``topic`` is its spec), and why."""
    if receiver.id == owner.id:
        return True, "owner"
    scope = topic.get("access_scope", "private")
    if scope == "public":
        return True, "public"
    if scope != "restricted":
        return False, "private topic"
    if topic.get("share_with_partner_orgs") and receiver.id in owner.partner_ids:
        return True, "partner organization"
    if topic.get("share_with_license_subscribers") and receiver.id in owner.license_subscriber_ids:
        return True, "license subscriber"
    if topic.get("share_with_allowed_orgs") and receiver.id in (topic.get("allowed_organization_ids") or ()):
        return True, "allowed organization"
    if topic.get("share_with_sibling_orgs") and owner.parent_id is not None and receiver.parent_id == owner.parent_id:
        return True, "sibling organization"
    return False, "not shared with this organization"


def targeted(target_ids: Sequence[str] | None, receiver_id: str, owner_id: str) -> bool:
    """Whether an event whose publish named ``target_ids`` (None: no narrowing) reaches ``receiver_id``."""
    return receiver_id == owner_id or target_ids is None or receiver_id in target_ids
