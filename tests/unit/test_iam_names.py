"""Resource names and regex tails: anchored, bounded, and never beyond their organization."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.domain.iam import (
    MAX_NAME_LENGTH,
    MAX_TAIL_LENGTH,
    InvalidName,
    NamePattern,
    organization_name,
    organization_of,
    parse_pattern,
    pattern_covers,
    resource_name,
    validate_binding_resource,
    validate_resource_name,
)

ORG = "org_1"
O = organization_name(ORG)
SUBTREE = "<(/.*)?$>"


def matches(pattern: str, name: str) -> bool:
    return parse_pattern(pattern).matches(name)


def inside(name: str, org_id: str) -> bool:
    """The name is the organization's own name or lies inside it."""
    return name == organization_name(org_id) or name.startswith(organization_name(org_id) + ":")


# --- the documented forms -------------------------------------------------------------------


def test_resource_name_builds_the_documented_forms() -> None:
    assert organization_name(ORG) == "crn:tocsin:organizations:org_1"
    assert resource_name(ORG) == O
    assert resource_name(ORG, "incidents") == f"{O}:incidents"
    assert resource_name(ORG, "incidents", "inc_1") == f"{O}:incidents/inc_1"


@pytest.mark.parametrize(
    ("name", "covered"),
    [
        (f"{O}:incidents/X", True),
        (f"{O}:incidents/X/events", True),
        (f"{O}:incidents/X/forms/1", True),
        (f"{O}:incidents/X/reports/2/pages/3", True),
        (f"{O}:incidents/XY", False),
        (f"{O}:incidents/XY/events", False),
        (f"{O}:incidents/Y/events", False),
        (f"{O}:incidents", False),
        ("crn:tocsin:organizations:org_2:incidents/X", False),
    ],
)
def test_regex_tail_covers_sub_resources(name: str, covered: bool) -> None:
    assert matches(f"{O}:incidents/X{SUBTREE}", name) is covered


@pytest.mark.parametrize(
    ("name", "covered"),
    [
        (f"{O}:incidents/anything", True),
        (f"{O}:incidents/inc_1/events/ev_1", True),
        (f"{O}:incidents", True),
        (f"{O}:incidents_archive/1", False),
        (f"{O}:incidentsX", False),
        (f"{O}:workflow_topics/t", False),
        ("crn:tocsin:organizations:org_2:incidents/anything", False),
        ("crn:tocsin:organizations:org_12:incidents/anything", False),
    ],
)
def test_collection_tail_covers_every_resource_of_the_type(name: str, covered: bool) -> None:
    assert matches(f"{O}:incidents{SUBTREE}", name) is covered


@pytest.mark.parametrize(
    ("name", "covered"),
    [
        (O, True),
        (f"{O}:incidents/X", True),
        (f"{O}:anything/at/all", True),
        (f"{O}:workflow_topics/t/control", True),
        ("crn:tocsin:organizations:org_12", False),
        ("crn:tocsin:organizations:org_12:incidents/X", False),
        ("crn:tocsin:organizations:org_", False),
        ("crn:tocsin:organizations:org_2:incidents/X", False),
        (f"{O}/x", False),
        (f"{O}<x>", False),
    ],
)
def test_org_name_binding_covers_the_org(name: str, covered: bool) -> None:
    assert matches(O, name) is covered


def test_a_literal_name_without_tail_covers_only_itself() -> None:
    pattern = f"{O}:incidents/X"
    assert matches(pattern, pattern)
    assert not matches(pattern, f"{pattern}/events")
    assert not matches(pattern, f"{pattern}Y")


def test_tail_is_anchored_at_both_ends() -> None:
    assert matches(f"{O}:incidents/<a>", f"{O}:incidents/a")
    assert not matches(f"{O}:incidents/<a>", f"{O}:incidents/ab")
    assert not matches(f"{O}:incidents/<b>", f"{O}:incidents/ab")
    assert matches(f"{O}:incidents/<^a$>", f"{O}:incidents/a")


def test_names_with_a_newline_never_match() -> None:
    assert not matches(f"{O}:incidents/<[^/]*>", f"{O}:incidents/a\n")
    assert not matches(O, f"{O}:incidents/a\nb")


def test_names_longer_than_the_limit_never_match() -> None:
    long_name = f"{O}:incidents/" + "a" * MAX_NAME_LENGTH
    assert not matches(O, long_name)
    assert not matches(f"{O}:incidents<.*>", long_name)


def test_parsed_patterns_are_cached() -> None:
    name = f"{O}:incidents/cached{SUBTREE}"
    assert parse_pattern(name) is parse_pattern(name)


# --- what a binding's name may say ----------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        O,
        f"{O}:incidents",
        f"{O}:incidents/inc_1",
        f"{O}:incidents{SUBTREE}",
        f"{O}:incidents/inc_1{SUBTREE}",
        f"{O}:incidents/<[^/]+>",
        f"{O}:<incidents(/.*)?>",
        f"{O}<(:.*)?>",
        f"{O}<:incidents/.*>",
        f"{O}:workflow_topics/t-1.a~b",
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
        validate_binding_resource(O, org_id)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "crn:tocsin:organizations:",
        "crn:other:organizations:org_1",
        "CRN:tocsin:organizations:org_1",
        "crn:tocsin:projects:org_1",
        f"{O}:",
        f"{O}:Incidents/X",
        f"{O}:incidents/",
        f"{O}:incidents//X",
        f"{O}:incidents/..",
        f"{O}:incidents/./X",
        f"{O}:incidents/X/../Y",
        f"{O}:incidents/X:Y",
        f"{O}:incidents/X Y",
        f"{O}:incidents/é",
        f"{O}:incidents/X\n",
        f"{O}\n",
        f"{O}:incidents/<a>",
        f"{O}:incidents/X>",
        f"{O}:incidents/" + "a" * MAX_NAME_LENGTH,
    ],
)
def test_malformed_literal_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidName):
        validate_resource_name(name)


@pytest.mark.parametrize(
    "name", [O, f"{O}:incidents", f"{O}:incidents/inc_01ABC", f"{O}:service_accounts/sa_1/access_tokens/tok_1"]
)
def test_well_formed_literal_names_are_returned_unchanged(name: str) -> None:
    assert validate_resource_name(name) == name


@pytest.mark.parametrize(
    ("tail", "why"),
    [
        (r"(/.*)\1", "backreference"),
        ("(?P<n>a)(?P=n)", "named backreference"),
        ("(a|b)(?(1)a|b)", "conditional group"),
        ("(a+)+", "repeated group"),
        ("(a|a)*", "repeated alternation"),
        ("(a*)*", "nested quantifier"),
        ("(?:a+)+", "repeated non-capturing group"),
        ("(.*)+", "repeated group"),
        ("a**", "double quantifier"),
        ("a*+", "possessive quantifier"),
        ("(?>a*)", "atomic group"),
        ("a{1,5}", "counted repeat"),
        ("(?=a).*", "lookahead"),
        ("(?<=a).*", "lookbehind"),
        ("(?i)a", "inline flag"),
        ("(?s).*", "dotall flag"),
        (r"\d+", "escape"),
        (r"[\w]+", "escape in a class"),
        ("[[a]]", "nested set"),
        ("[a--z]", "set difference"),
        ("[z-a]", "descending range"),
        ("[A-z]", "range across kinds"),
        ("[]", "empty class"),
        ("[^]", "empty negated class"),
        ("[a", "unclosed class"),
        ("(a", "unbalanced ("),
        ("a)", "unbalanced )"),
        ("*a", "quantifier without atom"),
        ("a|*", "quantifier without atom"),
        ("a$b", "anchor in the middle"),
        ("a^b", "anchor in the middle"),
        ("é", "unicode"),
        ("a\nb", "newline"),
        ("a b", "space"),
        (".*.*.*", "three unbounded repeats"),
        ("[^/]*[^/]*[^/]*x", "three unbounded repeats"),
        ("a?" * 20 + ".*", "too many optional parts with a repeat"),
        ("(a|b|c|d)?" * 3 + ".*.*", "alternation times repeats"),
        ("a" * (MAX_TAIL_LENGTH + 1), "too long"),
        ("", "empty"),
        ("^$", "empty once anchors are stripped"),
    ],
)
def test_unsafe_or_malformed_tails_are_rejected(tail: str, why: str) -> None:
    with pytest.raises(InvalidName):
        parse_pattern(f"{O}:incidents/<{tail}>")


@pytest.mark.parametrize(
    "name",
    [
        f"{O}:incidents<a>/X",  # the tail is not at the end
        f"{O}:incidents<a><b>",
        f"{O}:incidents<(/.*)?$",
        f"{O}:incidents/X>",
        "crn:tocsin:organizations:<.*>",
        "crn:other:organizations:org_1<.*>",
        f"{O}:incidents/<" + "a" * (MAX_NAME_LENGTH) + ">",
    ],
)
def test_malformed_binding_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidName):
        parse_pattern(name)


def test_organization_of_reads_the_org_segment() -> None:
    assert organization_of(f"{O}:incidents/X") == ORG
    assert organization_of(O) == ORG
    assert organization_of(f"{O}<(:.*)?>") == ORG
    assert organization_of("crn:other:organizations:org_1") == ""
    assert organization_of("garbage") == ""


# --- pattern containment (escalation guard on patterns) -------------------------------------


@pytest.mark.parametrize(
    ("outer", "inner", "covered"),
    [
        (O, O, True),
        (O, f"{O}:incidents{SUBTREE}", True),
        (O, f"{O}<.*>", True),
        (O, f"{O}:<.*>", True),
        (O, "crn:tocsin:organizations:org_12", False),
        (O, "crn:tocsin:organizations:org_12:incidents<.*>", False),
        (f"{O}:incidents{SUBTREE}", f"{O}:incidents/X{SUBTREE}", True),
        (f"{O}:incidents{SUBTREE}", f"{O}:incidents/X", True),
        (f"{O}:incidents{SUBTREE}", f"{O}:incidents", True),
        (f"{O}:incidents{SUBTREE}", f"{O}:incidents<.*>", False),  # would reach incidents_archive
        (f"{O}:incidents{SUBTREE}", O, False),
        (f"{O}:incidents/X{SUBTREE}", f"{O}:incidents/X<.*>", False),  # would reach incidents/XY
        (f"{O}:incidents/X{SUBTREE}", f"{O}:incidents/X/events<.*>", True),
        (f"{O}:incidents/X{SUBTREE}", f"{O}:incidents/X</.*>", True),
        (f"{O}:incidents/X", f"{O}:incidents/X", True),
        (f"{O}:incidents/X", f"{O}:incidents/X{SUBTREE}", False),
        (f"{O}:incidents/<[a-z]+>", f"{O}:incidents/<[a-z]+>", True),
        (f"{O}:incidents/<[a-z]+>", f"{O}:incidents/abc", False),  # not a tail it can reason about
        (f"{O}:incidents/<(a+)+>", f"{O}:incidents/<(a+)+>", False),  # invalid patterns cover nothing
    ],
)
def test_pattern_covers_is_conservative(outer: str, inner: str, covered: bool) -> None:
    assert pattern_covers(outer, inner) is covered


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
        pattern = parse_pattern(f"{O}:incidents/<{tail}>")
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
        started = time.perf_counter()
        pattern.matches(name)
        elapsed = time.perf_counter() - started
        assert elapsed < 0.05, f"{pattern.tail} on a {len(name)}-char name took {elapsed * 1000:.1f} ms"


@pytest.mark.parametrize("tail", WORST_TAILS)
def test_worst_case_tails_match_in_bounded_time(tail: str) -> None:
    literal = f"{O}:x"
    pattern = parse_pattern(f"{literal}<{tail}>")  # accepted: the bound is what keeps it fast
    assert_fast(pattern, adversarial_names(literal))


@settings(max_examples=150, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow], deadline=None)
@given(grammar_tails.map(lambda t: t + "Z"))
def test_every_accepted_tail_matches_in_bounded_time(tail: str) -> None:
    literal = f"{O}:x"
    try:
        pattern = parse_pattern(f"{literal}<{tail}>")
    except InvalidName:
        assume(False)
        return
    assert_fast(pattern, adversarial_names(literal))
