"""Topic sharing rules: every scope and flag, from the owner's relations, and the per-publish narrowing."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain.iam.sharing import OrgRelations, may_receive, targeted

OWNER = OrgRelations(
    "org_owner",
    parent_id="org_parent",
    partner_ids=frozenset({"org_partner"}),
    license_subscriber_ids=frozenset({"org_licensee"}),
)
PARTNER = OrgRelations("org_partner")
LICENSEE = OrgRelations("org_licensee")
ALLOWED = OrgRelations("org_allowed")
SIBLING = OrgRelations("org_sibling", parent_id="org_parent")
STRANGER = OrgRelations("org_stranger", parent_id="org_other_parent")
ORPHAN_OWNER = OrgRelations("org_orphan")
ORPHAN_PEER = OrgRelations("org_orphan_peer")
ALL_FLAGS = {
    "share_with_partner_orgs": True,
    "share_with_license_subscribers": True,
    "share_with_allowed_orgs": True,
    "share_with_sibling_orgs": True,
    "allowed_organization_ids": ["org_allowed"],
}


@pytest.mark.parametrize("receiver", [PARTNER, LICENSEE, ALLOWED, SIBLING, STRANGER])
def test_private_reaches_no_other_organization(receiver: OrgRelations) -> None:
    assert may_receive({"access_scope": "private", **ALL_FLAGS}, OWNER, receiver) == (False, "private topic")


@pytest.mark.parametrize("scope", ["private", "restricted", "public"])
def test_the_owner_always_receives(scope: str) -> None:
    assert may_receive({"access_scope": scope}, OWNER, OWNER) == (True, "owner")


@pytest.mark.parametrize("receiver", [PARTNER, LICENSEE, ALLOWED, SIBLING, STRANGER])
def test_public_reaches_everyone(receiver: OrgRelations) -> None:
    assert may_receive({"access_scope": "public"}, OWNER, receiver)[0] is True


@pytest.mark.parametrize(
    ("flag", "receiver", "why"),
    [
        ("share_with_partner_orgs", PARTNER, "partner organization"),
        ("share_with_license_subscribers", LICENSEE, "license subscriber"),
        ("share_with_allowed_orgs", ALLOWED, "allowed organization"),
        ("share_with_sibling_orgs", SIBLING, "sibling organization"),
    ],
)
def test_each_restricted_flag_reaches_its_relation_and_only_with_the_flag(
    flag: str, receiver: OrgRelations, why: str
) -> None:
    spec: dict[str, Any] = {"access_scope": "restricted", "allowed_organization_ids": ["org_allowed"]}
    assert may_receive(spec, OWNER, receiver) == (False, "not shared with this organization")
    assert may_receive({**spec, flag: True}, OWNER, receiver) == (True, why)
    assert may_receive({**spec, flag: True}, OWNER, STRANGER)[0] is False


def test_restricted_with_every_flag_still_refuses_a_stranger() -> None:
    assert may_receive({"access_scope": "restricted", **ALL_FLAGS}, OWNER, STRANGER)[0] is False


def test_organizations_without_a_parent_are_not_siblings() -> None:
    spec = {"access_scope": "restricted", "share_with_sibling_orgs": True}
    assert may_receive(spec, ORPHAN_OWNER, ORPHAN_PEER)[0] is False


def test_relations_count_from_the_owners_side_only() -> None:
    # The partner lists the owner, the owner does not list the partner: no sharing.
    owner = OrgRelations("org_a")
    spec = {"access_scope": "restricted", "share_with_partner_orgs": True}
    assert may_receive(spec, owner, OrgRelations("org_b", partner_ids=frozenset({"org_a"})))[0] is False


@pytest.mark.parametrize(
    ("targets", "receiver", "expected"),
    [
        (None, "org_b", True),
        (["org_b"], "org_b", True),
        (["org_c"], "org_b", False),
        ([], "org_b", False),
        (["org_c"], "org_owner", True),
    ],
)
def test_target_organization_ids_narrow_other_receivers_never_the_owner(
    targets: list[str] | None, receiver: str, expected: bool
) -> None:
    assert targeted(targets, receiver, "org_owner") is expected
