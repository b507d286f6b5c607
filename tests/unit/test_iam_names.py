"""Resource names and regex tails: anchored, bounded, and never beyond their organization."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.domain.iam.resource_names import (
    MAX_NAME_LENGTH,
    MAX_TAIL_LENGTH,
    InvalidName,
    NamePattern,
    organization_name,
    organization_of,
    parse_pattern,
    resource_name,
    validate_binding_resource,
    validate_resource_name,
)
from tests.support.bounds import bounded

ORG = "org_1"
OWN = organization_name(ORG)
SUBTREE = "<(/.*)?$>"


def matches(pattern: str, name: str) -> bool:
    return parse_pattern(pattern).matches(name)


def inside(name: str, org_id: str) -> bool:
    """The name is the organization's own name or lies inside it."""
    return name == organization_name(org_id) or name.startswith(organization_name(org_id) + ":")


# --- the documented forms -------------------------------------------------------------------


def test_resource_name_builds_the_documented_forms() -> None:
    assert organization_name(ORG) == "crn:tocsin:organizations:org_1"
    assert resource_name(ORG) == OWN
    assert resource_name(ORG, "incidents") == f"{OWN}:incidents"
    assert resource_name(ORG, "incidents", "inc_1") == f"{OWN}:incidents/inc_1"


@pytest.mark.parametrize("rest", ["/X", "/X/events", "/X/forms/1", "/X/reports/2/pages/3"])
def test_regex_tail_covers_sub_resources(rest: str) -> None:
    assert matches(f"{OWN}:incidents/X{SUBTREE}", f"{OWN}:incidents{rest}")


@pytest.mark.parametrize("rest", [":incidents/XY", ":incidents/XY/events", ":incidents/Y/events", ":incidents", "2:X"])
def test_regex_tail_does_not_cover_siblings(rest: str) -> None:
    assert not matches(f"{OWN}:incidents/X{SUBTREE}", OWN + rest)


@pytest.mark.parametrize("rest", ["/anything", "/inc_1/events/ev_1", "/X/forms/1", ""])
def test_collection_tail_covers_every_resource_of_the_type(rest: str) -> None:
    assert matches(f"{OWN}:incidents{SUBTREE}", f"{OWN}:incidents{rest}")


@pytest.mark.parametrize("rest", [":incidents_archive/1", ":incidentsX", ":workflow_topics/t", "2:incidents/X"])
def test_collection_tail_covers_no_other_type_or_org(rest: str) -> None:
    assert not matches(f"{OWN}:incidents{SUBTREE}", OWN + rest)
    assert not matches(f"{OWN}:incidents{SUBTREE}", f"crn:tocsin:organizations:org_2:incidents/{rest}")


@pytest.mark.parametrize("rest", ["", ":incidents/X", ":anything/at/all", ":workflow_topics/t/control"])
def test_org_name_binding_covers_the_org(rest: str) -> None:
    assert matches(OWN, OWN + rest)


@pytest.mark.parametrize("name", ["crn:tocsin:organizations:org_12", "crn:tocsin:organizations:org_", f"{OWN}/x"])
def test_org_name_binding_covers_no_other_org(name: str) -> None:
    assert not matches(OWN, name)
    assert not matches(OWN, f"{name}:incidents/X")


def test_a_tail_right_after_the_org_id_cannot_extend_it() -> None:
    pattern = parse_pattern(f"{OWN}<.*>")  # parses; validate_binding_resource refuses it
    assert pattern.matches(f"{OWN}:incidents/X")
    assert not pattern.matches("crn:tocsin:organizations:org_12:incidents/X")
    assert not parse_pattern("crn:tocsin:organizations:org_<.*>").matches(f"{OWN}:incidents/X")


def test_a_literal_name_without_tail_covers_only_itself() -> None:
    pattern = f"{OWN}:incidents/X"
    assert matches(pattern, pattern)
    assert not matches(pattern, f"{pattern}/events")
    assert not matches(pattern, f"{pattern}Y")


def test_tail_is_anchored_at_both_ends() -> None:
    assert matches(f"{OWN}:incidents/<a>", f"{OWN}:incidents/a")
    assert not matches(f"{OWN}:incidents/<a>", f"{OWN}:incidents/ab")
    assert not matches(f"{OWN}:incidents/<b>", f"{OWN}:incidents/ab")
    assert matches(f"{OWN}:incidents/<^a$>", f"{OWN}:incidents/a")


def test_names_with_a_newline_never_match() -> None:
    assert not matches(f"{OWN}:incidents/<[^/]*>", f"{OWN}:incidents/a\n")
    assert not matches(OWN, f"{OWN}:incidents/a\nb")


def test_names_longer_than_the_limit_never_match() -> None:
    long_name = f"{OWN}:incidents/" + "a" * MAX_NAME_LENGTH
    assert not matches(OWN, long_name)
    assert not matches(f"{OWN}:incidents<.*>", long_name)


def test_parsed_patterns_are_cached() -> None:
    name = f"{OWN}:incidents/cached{SUBTREE}"
    assert parse_pattern(name) is parse_pattern(name)


# --- what a binding's name may say ----------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        OWN,
        f"{OWN}:incidents",
        f"{OWN}:incidents/inc_1",
        f"{OWN}:incidents{SUBTREE}",
        f"{OWN}:incidents/inc_1{SUBTREE}",
        f"{OWN}:incidents/<[^/]+>",
        f"{OWN}:<incidents(/.*)?>",
        f"{OWN}<(:.*)?>",
        f"{OWN}<:incidents/.*>",
        f"{OWN}:workflow_topics/t-1.a~b",
    ],
)
def test_binding_names_inside_their_org_are_accepted(name: str) -> None:
    assert isinstance(validate_binding_resource(name, ORG), NamePattern)


@pytest.mark.parametrize(
    "name",
    [
        "crn:tocsin:organizations:org_1<.*>",  # the tail could continue the org id: org_12
        "crn:tocsin:organizations:org_1<2:.*>",
        "crn:tocsin:organizations:org_1<[0-9]*:.*>",
        "crn:tocsin:organizations:org_<.*>",  # the literal names only part of the org id
        "crn:tocsin:organizations:org<_1:.*>",
        "crn:tocsin:organizations:<org_1:.*>",
        "crn:tocsin:organizations:org_12",
        "crn:tocsin:organizations:org_12:incidents<.*>",
        "crn:tocsin:organizations:org_2:incidents/X",
        "crn:tocsin:organizations:org_1x:incidents",
    ],
)
def test_binding_names_must_name_their_org_in_full(name: str) -> None:
    with pytest.raises(InvalidName):
        validate_binding_resource(name, ORG)


@pytest.mark.parametrize("org_id", ["", "org:1", "org 1", "orgé", "org_1<", "a" * 129])
def test_binding_names_need_a_well_formed_org_id(org_id: str) -> None:
    with pytest.raises(InvalidName):
        validate_binding_resource(OWN, org_id)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "crn:tocsin:organizations:",
        "crn:other:organizations:org_1",
        "CRN:tocsin:organizations:org_1",
        "crn:tocsin:projects:org_1",
        f"{OWN}:",
        f"{OWN}:Incidents/X",
        f"{OWN}:incidents/",
        f"{OWN}:incidents//X",
        f"{OWN}:incidents/..",
        f"{OWN}:incidents/./X",
        f"{OWN}:incidents/X/../Y",
        f"{OWN}:incidents/X:Y",
        f"{OWN}:incidents/X Y",
        f"{OWN}:incidents/é",
        f"{OWN}:incidents/X\n",
        f"{OWN}\n",
        f"{OWN}:incidents/<a>",
        f"{OWN}:incidents/X>",
        f"{OWN}:incidents/" + "a" * MAX_NAME_LENGTH,
    ],
)
def test_malformed_literal_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidName):
        validate_resource_name(name)


@pytest.mark.parametrize(
    "name", [OWN, f"{OWN}:incidents", f"{OWN}:incidents/inc_01ABC", f"{OWN}:service_accounts/sa_1/access_tokens/tok_1"]
)
def test_well_formed_literal_names_are_returned_unchanged(name: str) -> None:
    assert validate_resource_name(name) == name


BACKREFERENCES = [r"(/.*)\1", "(?P<n>a)(?P=n)", "(a|b)(?(1)a|b)"]
REPEATED_GROUPS = ["(a+)+", "(a|a)*", "(a*)*", "(?:a+)+", "(.*)+", "(a|b)?*", "((a))+"]
OTHER_QUANTIFIERS = ["a**", "a*+", "a?+", "a{1,5}", "*a", "a|*", "(?>a*)"]
EXTENSIONS_AND_ESCAPES = ["(?=a).*", "(?<=a).*", "(?i)a", "(?s).*", r"\d+", r"[\w]+", "a$b", "a^b"]
BAD_CLASSES = ["[[a]]", "[a--z]", "[z-a]", "[A-z]", "[]", "[^]", "[a", "[a&&b]", "[a~~b]", "[é]"]
BAD_SYNTAX = ["(a", "a)", "é", "a\nb", "a b", "", "^$", "a" * (MAX_TAIL_LENGTH + 1)]
TOO_AMBIGUOUS = [".*.*.*", "[^/]*[^/]*[^/]*x", "a?" * 20 + ".*", "(a|b|c|d)?" * 3 + ".*.*", "(.*|.*)(.*|.*)"]


@pytest.mark.parametrize(
    "tail",
    BACKREFERENCES
    + REPEATED_GROUPS
    + OTHER_QUANTIFIERS
    + EXTENSIONS_AND_ESCAPES
    + BAD_CLASSES
    + BAD_SYNTAX
    + TOO_AMBIGUOUS,
)
def test_unsafe_or_malformed_tails_are_rejected(tail: str) -> None:
    with pytest.raises(InvalidName):
        parse_pattern(f"{OWN}:incidents/<{tail}>")


@pytest.mark.parametrize(
    "name",
    [
        f"{OWN}:incidents<a>/X",  # the tail is not at the end
        f"{OWN}:incidents<a><b>",
        f"{OWN}:incidents<(/.*)?$",
        f"{OWN}:incidents/X>",
        "crn:tocsin:organizations:<.*>",
        "crn:other:organizations:org_1<.*>",
        f"{OWN}:incidents/<" + "a" * (MAX_NAME_LENGTH) + ">",
    ],
)
def test_malformed_binding_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidName):
        parse_pattern(name)


def test_organization_of_reads_the_org_segment() -> None:
    assert organization_of(f"{OWN}:incidents/X") == ORG
    assert organization_of(OWN) == ORG
    assert organization_of(f"{OWN}<(:.*)?>") == ORG
    assert organization_of("crn:other:organizations:org_1") == ""
    assert organization_of("garbage") == ""


# --- properties -----------------------------------------------------------------------------

ORG_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
org_ids = st.text(ORG_CHARS, min_size=1, max_size=12)
_atoms = st.sampled_from(["a", "b", "1", "2", "_", "-", "/", ":", ".", "[a-z]", "[^/]", "[0-9_]", "[:]", "[a-z-]"])
_items = st.builds(lambda atom, q: atom + q, _atoms, st.sampled_from(["", "", "?", "*", "+", "*?", "??"]))
_seqs = st.lists(_items, min_size=0, max_size=4).map("".join)
grammar_tails = st.recursive(
    _seqs.filter(bool),
    lambda inner: st.builds(
        lambda pre, parts, q, post: f"{pre}({'|'.join(parts)}){q}{post}",
        _seqs,
        st.lists(inner | st.just(""), min_size=1, max_size=3),
        st.sampled_from(["", "?"]),
        _seqs,
    ),
    max_leaves=6,
)
known_tails = st.sampled_from(
    ["(/.*)?$", ".*", "^.*$", "(:.*)?", ":.*", "2.*", "_.*", "[0-9a-z_-]*.*", ".?.*", "[^/]*", "(|2|_x).*", ".+"]
)
tails = known_tails | grammar_tails | st.text(max_size=MAX_TAIL_LENGTH)
literal_suffixes = st.sampled_from(["", ":", ":incidents", ":incidents/", ":incidents/X", ":workflow_topics/t"])
name_rests = st.one_of(
    st.sampled_from(["", ":incidents/X", ":incidents/X/events", ":a", "2", "2:incidents/X", "_1:x", "/x", "<.*>"]),
    st.text(st.sampled_from(list("ab12_-/:.")), max_size=12),
    st.text(st.sampled_from(list("ab12_-/:.<>\n é..")), max_size=40),
    st.text(max_size=40),
    st.integers(min_value=400, max_value=700).map(lambda n: (":incidents/" + "a/" * n)[:n]),
)


@st.composite
def org_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """Two organization ids, often one a prefix of the other."""
    first = draw(org_ids)
    extra = draw(org_ids)
    return draw(st.sampled_from([(first, first + extra), (first + extra, first), (first, extra), (first, first)]))


def binding_name(org_id: str, suffix: str, tail: str | None) -> str:
    return organization_name(org_id) + suffix + ("" if tail is None else f"<{tail}>")


@settings(max_examples=400, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow], deadline=None)
@given(org_pairs(), literal_suffixes, st.none() | tails, st.booleans(), name_rests)
def test_no_binding_reaches_another_org(
    orgs: tuple[str, str], suffix: str, tail: str | None, reuse_suffix: bool, rest: str
) -> None:
    own, other = orgs
    name = organization_name(other) + (suffix if reuse_suffix else "") + rest
    try:
        pattern = validate_binding_resource(binding_name(own, suffix, tail), own)
    except InvalidName:
        assume(False)
        return
    if pattern.matches(name):
        assert inside(name, own)


@settings(max_examples=400, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow], deadline=None)
@given(org_pairs(), st.integers(min_value=0, max_value=12), st.none() | tails, name_rests)
def test_a_parsed_pattern_never_reaches_beyond_its_literal_org(
    orgs: tuple[str, str], cut: int, tail: str | None, rest: str
) -> None:
    """Even without the org check of validate_binding_resource, e.g. ``...:org_<.*>``."""
    own, other = orgs
    literal_org = own[: max(cut, 1)]
    try:
        pattern = parse_pattern(binding_name(literal_org, "", tail))
    except InvalidName:
        assume(False)
        return
    name = organization_name(other) + rest
    if pattern.matches(name):
        assert inside(name, literal_org)


@settings(max_examples=300)
@given(st.text(st.sampled_from(list("()[]{}|*+?.^$\\-:/<>=!#aAz09_ é\n,")), max_size=MAX_TAIL_LENGTH + 4))
def test_any_tail_is_rejected_cleanly_or_compiles(tail: str) -> None:
    """parse_pattern raises InvalidName (never re.error, RecursionError, ...) or yields a regex."""
    try:
        pattern = parse_pattern(f"{OWN}:incidents/<{tail}>")
    except InvalidName:
        return
    assert pattern.tail is not None
    assert pattern.tail.pattern in tail


@settings(max_examples=300)
@given(st.text(max_size=MAX_NAME_LENGTH + 8))
def test_any_string_as_a_binding_name_is_rejected_cleanly(name: str) -> None:
    try:
        pattern = parse_pattern(name)
    except InvalidName:
        return
    assert name.startswith("crn:tocsin:organizations:")
    assert re.fullmatch(r"[ -~]*", pattern.literal)


# --- matching time stays bounded ------------------------------------------------------------

WORST_TAILS = [
    ".*.*Z",
    ".*?.*?Z",
    ".*a?.*Z",
    "[a-z]*[a-z]*[0-9]",
    "[^/]*/.*Z",
    "(/.*)?/.*Z",
    "(.*|.*)(a|b)Z",
    "(a|aa)?(a|aa)?(a|aa)?.*Z",
    "(a?a?a?a?a?|b)(a?a?a?a?|c).*Z",
    "(-|:).*.*Z",
]


def adversarial_names(literal: str) -> list[str]:
    room = MAX_NAME_LENGTH - len(literal)
    return [literal + (unit * room)[:room] for unit in ("a", "a/", "-:", "aa-", "/")]


def assert_fast(pattern: NamePattern, names: list[str]) -> None:
    for name in names:
        with bounded(f"{pattern.tail} on a {len(name)}-char name", bound=0.05):
            pattern.matches(name)


@pytest.mark.parametrize("tail", WORST_TAILS)
def test_worst_case_tails_match_in_bounded_time(tail: str) -> None:
    literal = f"{OWN}:x"
    pattern = parse_pattern(f"{literal}<{tail}>")  # accepted: the bound is what keeps it fast
    assert_fast(pattern, adversarial_names(literal))


@settings(max_examples=150, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow], deadline=None)
@given(grammar_tails.map(lambda t: t + "Z"))
def test_every_accepted_tail_matches_in_bounded_time(tail: str) -> None:
    literal = f"{OWN}:x"
    try:
        pattern = parse_pattern(f"{literal}<{tail}>")
    except InvalidName:
        assume(False)
        return
    assert_fast(pattern, adversarial_names(literal))
