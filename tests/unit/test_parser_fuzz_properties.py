"""Hypothesis properties of the pure parsers, beside ``test_parser_fuzz.py`` (which throws hostile
input at them): inputs generated *from each grammar* are accepted and round-trip, near misses
(a character the grammar forbids, surrounding whitespace) are refused with the documented error,
nested-quantifier tails are refused outright, and the regressions fuzzing found stay fixed:

- ``webhook_url_problem`` let ``urlsplit``'s ValueError escape (``http://[::1``): a 500 on save;
- ``translate_condition`` re-joined its output for every ``[``: quadratic in the condition.

Every call is bounded in CPU time (:mod:`tests.support.bounds`); ``TOCSIN_FUZZ_EXAMPLES`` raises the example count.
"""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from app.domain.events.notification import NotificationObject
from app.domain.events.publish import PublishRecordEncoder, PublishRequest, publish_record
from app.domain.iam.conditions import (
    _NAMESPACED,
    _OPERAND_START,
    _STRING,
    compile_condition,
    translate_condition,
)
from app.domain.iam.permissions import ACTIONS, PERMISSION_RE, expand_permission, is_valid_permission, permission_covers
from app.domain.iam.resource_names import (
    MAX_NAME_LENGTH,
    MAX_TAIL_LENGTH,
    InvalidName,
    organization_name,
    organization_of,
    parse_pattern,
    pattern_covers,
    validate_binding_resource,
    validate_resource_name,
)
from app.domain.iam.subject_filter import subject_matches, validate_subject_filter
from app.domain.workflows.filters.compiled import compile_filter
from app.domain.workflows.filters.operators import OPERATOR_TYPES
from app.domain.workflows.filters.validation import validate_filter
from app.domain.workflows.workflow import webhook_url_problem
from app.errors import InvalidCredential
from tests.support.bounds import bounded

T = TypeVar("T")
EXAMPLES = int(os.environ.get("TOCSIN_FUZZ_EXAMPLES", "0")) or None
settings.register_profile(
    "tocsin-fuzz-properties",
    max_examples=EXAMPLES or 100,
    deadline=None,  # bounded per call below: hypothesis' deadline flakes on a shared 2-core machine
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=EXAMPLES is None,
)
FUZZ = settings.get_profile("tocsin-fuzz-properties")


def timed(call: Callable[[], T], what: Any) -> T:
    with bounded(what):
        return call()


def refuses(call: Callable[[], object], error: type[BaseException], what: Any) -> None:
    with bounded(what), pytest.raises(error):
        call()


JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=25,
)
# what a JSON body can carry: no NaN nor infinity (they are not JSON)
VALID_JSON: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=25,
)
SPACES = st.sampled_from([" ", "\t", "\n", "\r", "\x0b", "\xa0", "\u2028"])

# ---------------------------------------------------------------- resource names

ORG_IDS = st.from_regex(r"[A-Za-z0-9_-]{1,40}", fullmatch=True)
TYPES = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
SEGMENTS = st.from_regex(r"[A-Za-z0-9_.~-]{1,30}", fullmatch=True).filter(lambda s: s not in (".", ".."))
NAME_CHARS = frozenset(string.ascii_letters + string.digits + "_.~-:/")


@st.composite
def resource_names(draw: st.DrawFn) -> tuple[str, str]:
    """(org id, a literal resource name inside it) from the grammar of API.md."""
    org = draw(ORG_IDS)
    parts = [organization_name(org)]
    if draw(st.booleans()):
        parts.append(":" + draw(TYPES) + "".join("/" + s for s in draw(st.lists(SEGMENTS, max_size=4))))
    return org, "".join(parts)


@FUZZ
@given(resource_names())
def test_generated_names_are_accepted_and_round_trip(org_and_name: tuple[str, str]) -> None:
    org, name = org_and_name
    assert timed(lambda: validate_resource_name(name), name) == name
    pattern = timed(lambda: parse_pattern(name), name)
    assert (pattern.literal, pattern.tail) == (name, None)
    assert pattern.matches(name)
    assert timed(lambda: validate_binding_resource(name, org), name) == pattern
    assert organization_of(name) == org
    # the organization's own name covers everything inside it, and nothing in another one
    assert parse_pattern(organization_name(org)).matches(name)
    assert not parse_pattern(organization_name(org + "x")).matches(name)
    assert pattern_covers(organization_name(org), name)
    assert pattern_covers(name, name)


@FUZZ
@given(resource_names(), st.data())
def test_a_forbidden_character_or_surrounding_space_is_refused(org_and_name: tuple[str, str], data: Any) -> None:
    _, name = org_and_name
    bad = data.draw(st.characters(codec="utf-8").filter(lambda c: c not in NAME_CHARS and c != ">"), label="bad")
    at = data.draw(st.integers(0, len(name)), label="at")
    for mutated in (name[:at] + bad + name[at:], data.draw(SPACES) + name, name + data.draw(SPACES)):
        refuses(lambda m=mutated: validate_resource_name(m), InvalidName, mutated)  # type: ignore[misc]
        refuses(lambda m=mutated: parse_pattern(m), InvalidName, mutated)  # type: ignore[misc]


# ---------------------------------------------------------------- regex tails

TAIL_ATOMS = st.sampled_from(["a", "b", "x", "0", "_", "-", "/", ":", ".", "[a-z]", "[^/]", "[0-9_]", "[ab]"])
QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "*?", "+?", "??"])


def tails() -> st.SearchStrategy[str]:
    """Tails of the documented subset: single characters and classes, groups, alternation, quantifiers."""
    item = st.builds(lambda a, q: a + q, TAIL_ATOMS, QUANTIFIERS)
    return st.recursive(
        st.lists(item, min_size=1, max_size=4).map("".join),
        lambda inner: st.builds(
            lambda kind, branches, q, after: ("(" if kind else "(?:") + "|".join(branches) + ")" + q + after,
            st.booleans(),
            st.lists(inner, min_size=1, max_size=3),
            st.sampled_from(["", "?", "??"]),
            st.sampled_from(["", "a*", "/.*", ":"]),
        ),
        max_leaves=6,
    )


NEAR_MISSES = st.text(alphabet="ab/:_-0x.\n!", max_size=60)


@FUZZ
@given(tails(), NEAR_MISSES)
@example("[^/]*/.*", "a" * 60)
@example("(a*b*|a*)?x*", "a" * 60 + "!")
def test_subset_tails_mean_what_re_says_and_stay_fast(tail: str, rest: str) -> None:
    literal = "crn:tocsin:organizations:org_1:incidents/"
    name = f"{literal}<{tail}>"
    try:
        pattern = timed(lambda: parse_pattern(name), name)
    except InvalidName as exc:  # the subset is refused only for its length or ambiguity
        assert len(tail) > MAX_TAIL_LENGTH or "too ambiguous" in str(exc), str(exc)
        return
    assert pattern.literal == literal and pattern.tail is not None
    expected = "\n" not in rest and re.fullmatch(tail, rest) is not None
    assert timed(lambda: pattern.matches(literal + rest), (tail, rest)) is expected
    # near misses as long as a name may be: a backtracking engine's worst case
    room = MAX_NAME_LENGTH - len(literal) - 1
    for hostile in ("a" * room + "!", "ab" * (room // 2) + "\n", "/" * room + "!", ":a" * (room // 2) + "!"):
        timed(lambda h=hostile: pattern.matches(literal + h), (tail, hostile[:8]))  # type: ignore[misc]


NESTED_QUANTIFIERS = ["(a+)+", "(a*)*", "(a+)*$", "^(a|aa)+$", "(.*)*", "(?:a+)+b", "(a|b)*", "([a-z]+)+", "(a?)*"]


@pytest.mark.parametrize("tail", NESTED_QUANTIFIERS)
def test_tails_with_nested_quantifiers_are_refused(tail: str) -> None:
    """Not merely harmless against one input: a repeated group is outside the subset."""
    name = f"crn:tocsin:organizations:org_1:incidents/<{tail}>"
    refuses(lambda: parse_pattern(name), InvalidName, name)
    refuses(lambda: validate_binding_resource(name, "org_1"), InvalidName, name)


def test_too_many_unbounded_repeats_are_refused_two_are_not() -> None:
    base = "crn:tocsin:organizations:org_1:incidents/"
    assert parse_pattern(f"{base}<[^/]*/.*>").tail is not None
    refuses(lambda: parse_pattern(f"{base}<.*.*.*x>"), InvalidName, ".*.*.*x")
    refuses(lambda: parse_pattern(f"{base}<{'a' * (MAX_TAIL_LENGTH + 1)}>"), InvalidName, "long")


# ---------------------------------------------------------------- permission ids

PERMISSIONS = st.from_regex(PERMISSION_RE)
PREFIXES = st.from_regex(r"[a-z][a-z0-9_]{0,10}(?:\.[a-z0-9_]{1,10}){0,3}", fullmatch=True)


@FUZZ
@given(PERMISSIONS, PREFIXES, SPACES)
def test_generated_permissions_are_valid_and_wildcards_expand(permission: str, prefix: str, space: str) -> None:
    assert timed(lambda: is_valid_permission(permission), permission)
    assert expand_permission(permission) == (permission,)
    assert not is_valid_permission(permission + space) and not is_valid_permission(space + permission)
    assert not is_valid_permission(permission.upper()) or permission.upper() == permission
    wildcard = prefix + ":*"
    assert not is_valid_permission(wildcard) and is_valid_permission(wildcard, allow_wildcard=True)
    expanded = expand_permission(wildcard)
    assert expanded == tuple(f"{prefix}:{action}" for action in ACTIONS)
    assert all(permission_covers(wildcard, p) for p in expanded)
    assert not permission_covers(wildcard, f"{prefix}.sub:get") and not permission_covers(wildcard, f"{prefix}x:get")


# ---------------------------------------------------------------- subject filters

SUBJECTS = st.text(st.characters(min_codepoint=33, exclude_characters="*"), min_size=1, max_size=80).filter(
    lambda s: s.strip() == s  # Unicode spaces (U+00A0, U+2028) count as surrounding spaces too
)


@FUZZ
@given(SUBJECTS, st.text(max_size=20), SPACES)
def test_subject_filters_round_trip_and_refuse_spaces_and_inner_stars(base: str, more: str, space: str) -> None:
    for accepted in (base, base + "*"):
        assert timed(lambda a=accepted: validate_subject_filter(a), accepted) == accepted  # type: ignore[misc]
        assert validate_subject_filter(validate_subject_filter(accepted)) == accepted
    assert subject_matches(base + "*", base + more) and subject_matches(base, base)
    assert not subject_matches(base, base + "x")
    for refused in (space + base, base + space, base + "*" + space, base[:1] + "*" + base + "*", "*"):
        refuses(lambda r=refused: validate_subject_filter(r), InvalidCredential, refused)  # type: ignore[misc]


# ---------------------------------------------------------------- CEL attribute conditions


def _translate_as_before(expression: str) -> str:
    """translate_condition as it was before the quadratic join was removed: the reference."""
    out: list[str] = []
    i = 0
    while i < len(expression):
        ch = expression[i]
        if ch in "\"'":
            match = _STRING.match(expression, i)
            end = match.end() if match else len(expression)
            out.append(expression[i:end])
            i = end
            continue
        if ch == "[":
            before = "".join(out).rstrip()
            prev = before[-1:] if before else ""
            if prev in _OPERAND_START and not before.endswith(("]", ")")) and _NAMESPACED.match(expression, i):
                out.append("claims")
        out.append(ch)
        i += 1
    return "".join(out)


CONDITION_PIECES = st.sampled_from(
    ['["ns"]', '["x y"]', "[", "]", " ", "\t", "(", ")", "&&", "||", "==", '"s"', "'t'", "a"]
)


@FUZZ
@given(st.lists(CONDITION_PIECES, max_size=30).map("".join) | st.text(max_size=60))
@example("[" * 4096)
@example('["a"]' * 800)
def test_condition_translation_is_linear_and_unchanged(expression: str) -> None:
    assert timed(lambda: translate_condition(expression), expression[:20]) == _translate_as_before(expression)


@pytest.mark.parametrize("expression", ["[" * 4096, "[ " * 2048, '["a"]' * 819, "(" * 4096, "!" * 4095 + "a"])
def test_long_hostile_conditions_compile_or_refuse_in_bounded_time(expression: str) -> None:
    try:
        condition = timed(lambda: compile_condition(expression), expression[:20])
    except InvalidCredential as exc:
        assert exc.field == "attribute_condition"
    else:
        assert isinstance(timed(lambda: condition.evaluate({"a": True}), expression[:20]), bool)


CLAIM_NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True).filter(
    lambda n: (
        n
        not in {
            "in",
            "as",
            "break",
            "const",
            "continue",
            "else",
            "for",
            "function",
            "if",
            "import",
            "let",
            "loop",
            "package",
            "namespace",
            "return",
            "var",
            "void",
            "while",
            "true",
            "false",
            "null",
            "claims",
        }
    )
)


@FUZZ
@given(CLAIM_NAMES, st.text(max_size=30), st.text(max_size=30), st.text(max_size=20))
def test_a_generated_equality_condition_means_what_it_says(claim: str, value: str, other: str, namespace: str) -> None:
    literal = json.dumps(value, ensure_ascii=False)  # a CEL string literal (CEL has no surrogate escapes)
    condition = timed(lambda: compile_condition(f"{claim} == {literal}"), claim)
    assert condition.evaluate({claim: value}) is True
    assert condition.evaluate({claim: other}) is (other == value)
    assert condition.evaluate({}) is False  # a missing claim is false, not an error
    namespaced = timed(
        lambda: compile_condition(f"[{json.dumps(namespace, ensure_ascii=False)}][{json.dumps(claim)}] == {literal}"),
        claim,
    )
    assert namespaced.evaluate({namespace: {claim: value}}) is True
    assert namespaced.evaluate({namespace: {claim: other}}) is (other == value)


# ---------------------------------------------------------------- publish bodies and notifications

KEYS = st.text(min_size=1, max_size=40)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
SOUNDS = st.text(min_size=1, max_size=20) | st.fixed_dictionaries(
    {},
    optional={"critical": st.sampled_from([0, 1]), "name": st.text(min_size=1, max_size=20), "volume": st.floats(0, 1)},
)
NOTIFICATIONS = st.fixed_dictionaries(
    {},
    optional={
        "lang": st.text(min_size=1, max_size=35),
        "data": st.dictionaries(st.text(max_size=10), VALID_JSON, max_size=4),
        "alert": st.fixed_dictionaries(
            {},
            optional={
                "options": st.fixed_dictionaries(
                    {},
                    optional={
                        "notification": st.fixed_dictionaries(
                            {},
                            optional={"title": st.text(max_size=50), "body": st.text(max_size=50), "sound": SOUNDS},
                        ),
                        "thread_id": KEYS,
                        "collapse_id": KEYS,
                        "time_to_live": st.floats(min_value=0, allow_infinity=False),
                    },
                )
            },
        ),
    },
)
PUBLISHES = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["ACTUAL", "DRILL", "TEST"]),
        "data": st.dictionaries(st.text(max_size=10), VALID_JSON, max_size=5),
    },
    optional={
        "event": st.fixed_dictionaries(
            {}, optional={"id": KEYS, "lang": st.text(max_size=35), "name": st.text(max_size=40)}
        ),
        "attributes": st.fixed_dictionaries(
            {},
            optional={"idempotency_key": KEYS, "target_organization_ids": st.lists(st.text(max_size=20), max_size=4)},
        ),
        "event_control": st.fixed_dictionaries(
            {},
            optional={
                "partition_key": KEYS,
                "metrics": st.dictionaries(KEYS, FINITE, max_size=4),
                "areas": st.lists(st.text(max_size=20), max_size=4),
            },
        ),
        "notification": NOTIFICATIONS,
    },
)


def _json(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


@FUZZ
@given(PUBLISHES, st.sampled_from(["", " ", "\n\t ", "\r\n"]))
@example(
    {
        "status": "ACTUAL",
        "data": {},
        "notification": {"alert": {"options": {"notification": {"sound": {"critical": 1.0}}}}},
    },
    "",
)
def test_generated_publish_bodies_are_accepted_and_round_trip(body: dict[str, Any], space: str) -> None:
    raw = space + _json(body) + space  # JSON whitespace around the body changes nothing
    request = timed(lambda: PublishRequest.model_validate_json(raw), raw[:60])
    assert request == PublishRequest.model_validate_json(_json(body))
    again = PublishRequest.model_validate_json(request.model_dump_json(exclude_none=True))
    assert again == request
    assert request.data == body["data"]
    record = publish_record(event_id="evt_1", org_id="org_1", topic_id="wtp_1", request=request, accepted_ms=1)
    fields = {k: v for k, v in json.loads(_json(record)).items() if k in PublishRequest.model_fields}
    assert PublishRequest.model_validate_json(_json(fields)) == request  # the agents read what was accepted
    encoder = PublishRecordEncoder("org_1", "wtp_1", 1)
    written = encoder.encode("evt_1", request)
    assert json.loads(written) == json.loads(_json(record))  # what the ingress writes is that record
    keyed = encoder.encode("evt_1", request, state_key="s")
    assert json.loads(keyed) == {**json.loads(_json(record)), "state_key": "s"}


@pytest.mark.parametrize(
    "raw",
    [
        '{"status":"ACTUAL","data":{},"event_control":{"metrics":{"a":1' + "0" * 400 + "}}}",
        '{"status":"ACTUAL","data":{},"event_control":{"metrics":{"a":1e400}}}',
        '{"status":"ACTUAL","data":{"a":1' + "0" * 5000 + "}}",
        '{"status":"ACTUAL","data":{},"notification":{"alert":{"options":{"time_to_live":1' + "0" * 400 + "}}}}",
        '{"status":"ACTUAL","data":{},"event_control":{"metrics":{"a":true}}}',
        '{"status":"actual","data":{}}',
        '{"status":"ACTUAL","data":{},"extra":1}',
        '{"status":"ACTUAL","data":{},"notification":{"alert":{"options":{"notification":{"sound":{"critical":true}}}}}}',
    ],
)
def test_out_of_range_or_mistyped_bodies_are_a_validation_error(raw: str) -> None:
    refuses(lambda: PublishRequest.model_validate_json(raw), ValidationError, raw[:60])


@FUZZ
@given(NOTIFICATIONS, JSON)
@example({}, 10**400)
@example({}, float("nan"))
def test_notification_objects_round_trip_and_a_wrong_type_anywhere_is_refused(value: dict[str, Any], junk: Any) -> None:
    parsed = timed(lambda: NotificationObject.model_validate(value), value)
    assert NotificationObject.model_validate_json(parsed.model_dump_json(exclude_none=True)) == parsed
    assert NotificationObject.model_validate_json(_json(value)) == parsed
    for key in ("lang", "alert", "unknown"):
        broken = {**value, key: junk}
        if (key == "lang" and isinstance(junk, str) and 1 <= len(junk) <= 35) or (
            key == "alert" and (junk is None or isinstance(junk, dict))
        ):
            continue
        refuses(lambda b=broken: NotificationObject.model_validate(b), ValidationError, broken)  # type: ignore[misc]


# ---------------------------------------------------------------- workflow filters

FIELDS = [
    {"id": "mag", "path": "quake.magnitude", "values": [{"type": "number", "operators": []}]},
    {"id": "area", "path": "quake.area", "site": True, "values": [{"type": "string", "operators": []}]},
    {"id": "flag", "path": "flag", "values": [{"type": "boolean", "operators": ["=", "!="]}]},
    {"id": "raw", "path": "raw"},
]
STRINGS = st.text(max_size=20)
NUMBERS = st.integers(-(10**6), 10**6) | FINITE


@st.composite
def conditions(draw: st.DrawFn) -> dict[str, Any]:
    field = draw(st.sampled_from(["mag", "area", "flag", "raw"]))
    kind = {"mag": "number", "area": "string", "flag": "boolean", "raw": draw(st.sampled_from(["number", "string"]))}[
        field
    ]
    operators = sorted(op for op, types in OPERATOR_TYPES.items() if kind in types or "any" in types)
    operator = draw(st.sampled_from(["=", "!="] if field == "flag" else operators))
    scalar = {"number": NUMBERS, "string": STRINGS, "boolean": st.booleans()}[kind]
    if operator in ("EXISTS", "IS NULL", "IS NOT NULL"):
        return {"field": field, "operator": operator}
    if operator == "BETWEEN":
        return {"field": field, "operator": operator, "value": sorted(draw(st.lists(NUMBERS, min_size=2, max_size=2)))}
    if operator in ("IN", "NOT IN"):
        return {"field": field, "operator": operator, "value": draw(st.lists(scalar, min_size=1, max_size=5))}
    return {"field": field, "operator": operator, "value": draw(scalar)}


FILTERS = st.recursive(
    conditions(),
    lambda inner: (
        st.builds(lambda c: {"not": c}, inner)
        | st.builds(lambda k, cs: {k: cs}, st.sampled_from(["all", "any"]), st.lists(inner, min_size=1, max_size=4))
    ),
    max_leaves=12,
).filter(lambda f: _depth(f) <= 10)
EVENTS = st.fixed_dictionaries(
    {},
    optional={
        "quake": st.fixed_dictionaries({}, optional={"magnitude": NUMBERS | JSON, "area": STRINGS | JSON}),
        "flag": st.booleans() | JSON,
        "raw": JSON,
    },
)


def _depth(node: Any) -> int:
    if isinstance(node, dict) and "not" in node:
        return 1 + _depth(node["not"])
    if isinstance(node, dict) and ("all" in node or "any" in node):
        return 1 + max(_depth(c) for c in node.get("all", node.get("any")))
    return 1


@FUZZ
@given(FILTERS, EVENTS)
def test_generated_filters_are_valid_round_trip_and_not_negates(node: dict[str, Any], event: dict[str, Any]) -> None:
    assert timed(lambda: validate_filter(node, FIELDS), node) == []
    assert validate_filter(json.loads(_json(node)), FIELDS) == []  # through JSON, as stored
    compiled = timed(lambda: compile_filter(node, FIELDS), node)
    negated = compile_filter({"not": node}, FIELDS)
    matched = timed(lambda: compiled.matches(event), (node, event))
    assert negated.matches(event) is (not matched)
    traced, clauses = compiled.evaluate(event)
    assert traced is matched and all(isinstance(c["result"], bool) for c in clauses)


@FUZZ
@given(
    st.lists(
        st.fixed_dictionaries(
            {"id": st.text(max_size=5), "path": st.text(max_size=10)},
            optional={
                "values": st.lists(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "type": st.sampled_from(["number", "string", "boolean", "any", "date"]),
                            "operators": st.lists(st.sampled_from([*OPERATOR_TYPES, "==", "LIKE"]), max_size=4),
                        },
                    ),
                    max_size=3,
                ),
                "site": st.booleans(),
            },
        ),
        max_size=4,
    ),
    FILTERS | JSON,
)
def test_any_declared_fields_and_any_filter_give_errors_never_exceptions(
    fields: list[dict[str, Any]], node: Any
) -> None:
    errors = timed(lambda: validate_filter(node, fields), node)
    assert all(isinstance(path, str) and isinstance(message, str) for path, message in errors)
    if not errors:
        compiled = compile_filter(node, fields)
        assert isinstance(compiled.matches({"raw": 1}), bool)


# ---------------------------------------------------------------- webhook URLs

URL_SEEDS = ["https://hooks.example.com/a?b=1", "http://127.0.0.1:8080/x", "https://[::1]:443/"]


@FUZZ
@given(
    st.one_of(
        st.text(max_size=80),
        st.builds(
            lambda s, i, c: s[:i] + c + s[i:],
            st.sampled_from(URL_SEEDS),
            st.integers(0, 40),
            st.sampled_from([*"[]@:#?/%\\ \n\x00\uff03\u2100", "[::1", "]", "user:pw@"]),
        ),
    ),
    st.booleans(),
)
@example("http://[::1", True)
@example("https://a\uff03b@c/", False)
@example("https://[zz]/", False)
@example(" HTTPS://0", False)
@example("https://exa\tmple.com/", False)
def test_webhook_urls_get_a_reason_or_none_never_an_exception(url: str, allow_http: bool) -> None:
    problem = timed(lambda: webhook_url_problem(url, allow_http=allow_http), url)
    assert problem is None or (isinstance(problem, str) and problem)
    if problem is None:
        assert url.lower().startswith(("https://", "http://") if allow_http else "https://")  # schemes ignore case
        assert not any(c <= " " for c in url), "urlsplit would drop what was saved"
        for space in (" ", "\t", "\n"):  # an accepted URL with a space around or inside it is not accepted
            assert webhook_url_problem(space + url, allow_http=allow_http) is not None
            assert webhook_url_problem(url[:8] + space + url[8:], allow_http=allow_http) is not None


@pytest.mark.parametrize("url", ["http://[::1", "https://a\uff03b@c/", "https://[zz]/"])
def test_malformed_webhook_urls_are_refused_with_a_reason(url: str) -> None:
    assert webhook_url_problem(url, allow_http=True) == "the webhook URL is malformed"


@pytest.mark.parametrize(
    "url", [" https://a.example/", "https://a.exa\nmple/", "https://a.example/\t", "https://a.example/ x"]
)
def test_webhook_urls_with_spaces_or_controls_are_refused(url: str) -> None:
    assert webhook_url_problem(url, allow_http=True) == "a webhook URL has no spaces or control characters"
