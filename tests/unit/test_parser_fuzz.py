"""Hypothesis fuzzing of the pure parsers: resource names and their regex tails, permission ids,
subject filters, CEL attribute conditions, publish bodies and their limits, notification
objects, workflow filters and templates.

Each parser either accepts an input or refuses it with its documented error (the one the API
maps to 422 / 400); no other exception escapes, and no input uses more than
:data:`tests.support.bounds.BOUND_SECONDS` of CPU time (a user-supplied regex or condition must
not hang a request).

``TOCSIN_FUZZ_EXAMPLES`` raises the example count (``make fuzz``); the default keeps the file
under a minute here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from api.body import split_batch
from app.domain.events.limits import PublishLimits, publish_violations
from app.domain.events.notification import NotificationObject
from app.domain.events.publish import PublishRecordEncoder, PublishRequest, publish_record
from app.domain.events.publish_check import check_batch_at_once, check_publish
from app.domain.iam.conditions import compile_condition
from app.domain.iam.permissions import is_valid_permission, permission_covers
from app.domain.iam.resource_names import (
    InvalidName,
    organization_of,
    parse_pattern,
    pattern_covers,
    validate_binding_resource,
    validate_resource_name,
)
from app.domain.iam.subject_filter import subject_matches, validate_subject_filter
from app.domain.shared.json_bounds import json_violations
from app.domain.workflows.filters.compiled import compile_filter
from app.domain.workflows.filters.sites import site_matches
from app.domain.workflows.filters.validation import InvalidFilter, validate_filter
from app.domain.workflows.workflow import render_template
from app.errors import InvalidCredential, InvalidInput
from app.kafka import records
from tests.support.bounds import bounded

T = TypeVar("T")
EXAMPLES = int(os.environ.get("TOCSIN_FUZZ_EXAMPLES", "0")) or None
settings.register_profile(
    "tocsin-fuzz",
    max_examples=EXAMPLES or 150,
    deadline=None,  # time is bounded per call below; hypothesis' deadline flakes on a busy machine
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=EXAMPLES is None,  # the bounded run in `make test` is reproducible
)
FUZZ = settings.get_profile("tocsin-fuzz")


def accepts_or_refuses(parse: Callable[[], T], *refusals: type[BaseException], what: Any) -> T | None:
    """``parse()``'s result, or None when it raised one of ``refusals``; anything else fails."""
    with bounded(what):
        try:
            return parse()
        except refusals:
            return None


def mutations(seeds: list[str]) -> st.SearchStrategy[str]:
    """Valid examples with characters inserted, deleted or replaced (near misses find more bugs)."""
    chars = st.sampled_from(list("<>()[]{}*+?|^$.\\:/_-aZ0 \n\t\x00é\"'=!&"))

    @st.composite
    def mutate(draw: st.DrawFn) -> str:
        text = draw(st.sampled_from(seeds))
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(text)))
            op = draw(st.sampled_from(("insert", "delete", "replace")))
            if op == "insert":
                text = text[:at] + draw(chars) + text[at:]
            elif text:
                at = min(at, len(text) - 1)
                text = text[:at] + ("" if op == "delete" else draw(chars)) + text[at + 1 :]
        return text

    return mutate()


def texts(seeds: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.text(max_size=200), mutations(seeds), st.sampled_from(seeds))


JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=25,
)

# ---------------------------------------------------------------- resource names and tails

ORG = "org_01abc"
NAME_SEEDS = [
    f"crn:tocsin:organizations:{ORG}",
    f"crn:tocsin:organizations:{ORG}:workflow_topics/wtp_1",
    f"crn:tocsin:organizations:{ORG}:workflow_topics/<.*>",
    f"crn:tocsin:organizations:{ORG}<(:.*)?>",
    f"crn:tocsin:organizations:{ORG}:incidents/<inc_[a-z0-9]+>",
    f"crn:tocsin:organizations:{ORG}:service_accounts/<(sa_1|sa_2)(/.*)?>",
]
# Tails with nested or overlapping quantifiers: classic catastrophic backtracking.
REDOS_TAILS = ["(a+)+$", "(a|a)*", "(a*)*b", "(.*)*x", "(a|aa)+$", "([a-z]+)*!", "(.*a){12}", "(\\w+\\s?)+$"]


@FUZZ
@given(texts(NAME_SEEDS + [f"crn:tocsin:organizations:{ORG}:x/<{t}>" for t in REDOS_TAILS]))
@example(f"crn:tocsin:organizations:{ORG}:x/<(a+)+$>")
@example("crn:tocsin:organizations:<>")
@example("<" * 600)
def test_binding_names_parse_or_refuse_and_match_in_bounded_time(name: str) -> None:
    pattern = accepts_or_refuses(lambda: parse_pattern(name), InvalidName, what=name)
    accepts_or_refuses(lambda: validate_binding_resource(name, ORG), InvalidName, what=name)
    accepts_or_refuses(lambda: validate_resource_name(name), InvalidName, what=name)
    if pattern is not None and pattern.tail is not None:
        # the worst inputs for a backtracking engine: long runs that almost match, then fail
        for hostile in ("a" * 400 + "!", "aaaa/" * 90 + "\n", ":" + "ab" * 200 + "\x00"):
            with bounded((name, hostile[:12])):
                pattern.tail.fullmatch(hostile)


@pytest.mark.parametrize("tail", REDOS_TAILS)
def test_catastrophic_tails_are_refused_or_harmless(tail: str) -> None:
    name = f"crn:tocsin:organizations:{ORG}:x/<{tail}>"
    pattern = accepts_or_refuses(lambda: parse_pattern(name), InvalidName, what=name)
    if pattern is not None:
        assert pattern.tail is not None
        with bounded(tail):
            pattern.tail.fullmatch("a" * 480 + "!")


@FUZZ
@given(texts([f"crn:tocsin:organizations:{ORG}:workflow_topics/<.*>", f"crn:tocsin:organizations:{ORG}"]), st.text())
def test_pattern_covers_and_evaluation_never_raise(outer: str, inner: str) -> None:
    with bounded((outer, inner)):
        assert isinstance(pattern_covers(outer, inner), bool)
        assert isinstance(organization_of(outer), str)


# ---------------------------------------------------------------- permission ids

PERMISSION_SEEDS = ["organization.workflow_topic:publish", "organization.*:get", "organization.incident:*", "*"]


@FUZZ
@given(texts(PERMISSION_SEEDS), texts(PERMISSION_SEEDS))
def test_permission_ids_are_judged_without_raising(granted: str, wanted: str) -> None:
    with bounded((granted, wanted)):
        valid = is_valid_permission(granted, allow_wildcard=True)
        assert isinstance(valid, bool)
        assert isinstance(is_valid_permission(wanted), bool)
        if valid and is_valid_permission(wanted):
            assert isinstance(permission_covers(granted, wanted), bool)
            if granted == wanted:
                assert permission_covers(granted, wanted)


# ---------------------------------------------------------------- subject filters, CEL conditions

SUBJECT_SEEDS = ["repo:acme/app:ref:refs/heads/main", "repo:acme/*", "system:serviceaccount:ns:sa"]


@FUZZ
@given(texts(SUBJECT_SEEDS), st.text(max_size=100))
@example("*", "anything")
@example("a*b*", "a")
def test_subject_filters_validate_or_refuse(value: str, subject: str) -> None:
    accepted = accepts_or_refuses(lambda: validate_subject_filter(value), InvalidCredential, what=value)
    if accepted is not None:
        assert accepted != "*" and "*" not in accepted[:-1]
        with bounded(subject):
            matched = subject_matches(accepted, subject)
        assert matched == (subject.startswith(accepted[:-1]) if accepted.endswith("*") else subject == accepted)


CONDITION_SEEDS = [
    'assertion.ref == "refs/heads/main"',
    'repository_owner == "acme" && ref.startsWith("refs/tags/")',
    '["https://example.com/ns"]["team"] == "sre"',
    "size(groups) > 0 && 'admins' in groups",
    "claims.aud == 'x' || !(ref_type == 'tag')",
]


@FUZZ
@given(texts(CONDITION_SEEDS), st.dictionaries(st.text(max_size=10), JSON, max_size=6))
@example('"' * 300, {})
@example("(" * 300, {})
@example('["a"]["b"]' * 50, {})
def test_conditions_compile_or_refuse_and_evaluate_to_a_boolean(expression: str, claims: dict[str, Any]) -> None:
    condition = accepts_or_refuses(lambda: compile_condition(expression), InvalidCredential, what=expression)
    if condition is not None:
        with bounded((expression, claims)):
            assert isinstance(condition.evaluate(claims), bool)
            assert isinstance(condition.failing_clause(claims), str)


# ---------------------------------------------------------------- publish bodies and their limits

PUBLISH_SEED = {
    "status": "ACTUAL",
    "data": {"quake": {"magnitude": 6.1, "areas": ["tokyo"]}},
    "event": {"id": "e-1", "name": "Quake", "description": "shaking"},
    "event_control": {"partition_key": "tokyo", "metrics": {"magnitude": 6.1}, "areas": ["a"]},
    "attributes": {"idempotency_key": "k1", "target_organization_ids": ["org_2"]},
    "notification": {"alert": {"options": {"notification": {"title": "Quake", "body": "M6"}}}},
}
SMALL = PublishLimits(data_bytes=200, data_depth=4, string_chars=30, array_items=5, metrics=3)


def _replace_somewhere(value: Any, path: list[str | int], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and head in value:
        return {**value, head: _replace_somewhere(value[head], rest, new)}
    if isinstance(value, list) and isinstance(head, int) and head < len(value):
        return [*value[:head], _replace_somewhere(value[head], rest, new), *value[head + 1 :]]
    return value


def _paths(value: Any, prefix: list[str | int]) -> Iterator[list[str | int]]:
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, [*prefix, key])
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, [*prefix, index])


PUBLISH_PATHS = list(_paths(PUBLISH_SEED, []))


@st.composite
def publish_bodies(draw: st.DrawFn) -> bytes:
    """Raw bodies: the seed with one subtree replaced by arbitrary JSON, random JSON, or bytes."""
    kind = draw(st.sampled_from(("mutated", "json", "bytes", "deep", "number")))
    if kind == "mutated":
        body = _replace_somewhere(PUBLISH_SEED, draw(st.sampled_from(PUBLISH_PATHS)), draw(JSON))
        return json.dumps(body, allow_nan=True).encode()
    if kind == "json":
        return json.dumps(draw(JSON), allow_nan=True).encode()
    if kind == "number":  # a number out of the records' range (64-bit integers, finite doubles) somewhere
        huge = draw(st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**40, -(10**400)]))
        text = draw(st.sampled_from([str(huge), "1e400", "-1e999", "1" + "0" * 400 + ".5"]))
        body = _replace_somewhere(PUBLISH_SEED, draw(st.sampled_from(PUBLISH_PATHS)), "__N__")
        return json.dumps(body).replace('"__N__"', text).encode()
    if kind == "deep":
        depth = draw(st.integers(1, 3000))
        return b'{"status":"ACTUAL","data":' + b"[" * depth + b"]" * depth + b"}"
    return draw(st.binary(max_size=300))


@FUZZ
@given(publish_bodies())
@example(b'{"status":"ACTUAL","data":{}}')
@example(b'{"status":"ACTUAL","data":' + b'{"a":' * 5000 + b"1" + b"}" * 5001)
@example(b"\xff\xfe")
@example(b'{"status":"ACTUAL","data":{"n":9223372036854775808}}')
@example(b'{"status":"ACTUAL","data":{},"notification":{"data":{"n":[-9223372036854775809]}}}')
@example(b'{"status":"ACTUAL","data":{"x":1e400}}')
def test_publish_bodies_parse_or_refuse_and_limits_are_bounded(body: bytes) -> None:
    request = accepts_or_refuses(lambda: PublishRequest.model_validate_json(body), ValidationError, what=body[:60])
    if request is not None:
        with bounded(body[:60]):
            found = publish_violations(request, body, PublishLimits())
            for violation in publish_violations(request, body, SMALL) + found:
                path, message = violation
                assert isinstance(path, str) and message
        if not found:  # accepted: the ingress's record encodes (orjson refuses integers beyond 64 bits)
            record = publish_record(event_id="evt_1", org_id=ORG, topic_id="wtp_1", request=request, accepted_ms=1)
            assert records.decode(records.encode(record))["data"] == request.data
            as_written = PublishRecordEncoder(ORG, "wtp_1", 1).encode("evt_1", request)
            assert records.decode(as_written) == records.decode(records.encode(record))  # the same record


def _one_by_one(body: bytes, limits: PublishLimits, required: bool, max_request: int) -> list[PublishRequest] | None:
    """The batch checked request by request, as the API's general path does (None: refused)."""
    try:
        items = split_batch(body, ndjson=False, max_items=1000)
        if any(len(item.body) > max_request for item in items):
            return None
        return [check_publish(item.body, limits, partition_key_required=required) for item in items]
    except (ValidationError, InvalidInput):
        return None


@FUZZ
@given(st.lists(publish_bodies(), min_size=1, max_size=4), st.booleans(), st.sampled_from([" ", "", "\n\t"]))
@example([b'{"status":"ACTUAL","data":{}}'], True, "")
@example([b'{"status":"ACTUAL","data":{},"event_control":{"partition_key":"k"}}'] * 2, True, " ")
@example([b'{"status":"ACTUAL","data":{"s":"' + b"x" * 40 + b'"}}'], False, "")
@example([b'{"status":"ACTUAL","data":{},"notification":{"data":{"a":[1,2,3,4,5,6]}}}'], False, "")
def test_a_batch_checked_at_once_accepts_only_what_checking_each_request_accepts(
    bodies: list[bytes], required: bool, space: str
) -> None:
    """The batch's one-pass check (app/domain/events/publish_check.py) is exact: whatever it accepts, checking
    each request as a single publish accepts too, as the same requests; it may decline (None) and
    leave the batch to that check, never accept what that check refuses."""
    sep = f"{space},{space}".encode()
    body = f"[{space}".encode() + sep.join(bodies) + f"{space}]".encode()
    for limits in (PublishLimits(), SMALL):
        for max_request in (256 * 1024, 120):
            with bounded(body[:60]):
                at_once = check_batch_at_once(
                    body, limits, max_items=1000, max_request_bytes=max_request, partition_key_required=required
                )
                each = _one_by_one(body, limits, required, max_request)
            if at_once is not None:
                assert each is not None, (body[:200], limits)
                assert [r.model_dump() for r in at_once] == [r.model_dump() for r in each]


def test_a_plain_batch_is_checked_at_once() -> None:
    """The common case takes the one-pass check (else it would only ever decline, unnoticed)."""
    item = {"status": "ACTUAL", "data": {"m": 5.5, "r": "kanto"}, "event_control": {"partition_key": "site-1"}}
    body = orjson.dumps([{**item, "event": {"id": str(i), "name": "e"}} for i in range(1000)])
    checked = check_batch_at_once(
        body, PublishLimits(), max_items=1000, max_request_bytes=256 * 1024, partition_key_required=True
    )
    assert checked is not None and len(checked) == 1000 and checked[999].event is not None
    assert checked[999].event.id == "999"


@FUZZ
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=40,
    )
)
@example([2**63])
@example({"a": -(2**63) - 1})
@example(float("inf"))
@example([[[[[[1]]]]]])
def test_every_stored_body_the_bounds_accept_encodes_for_the_pipeline(value: Any) -> None:
    """The shared validator (app/domain/shared/json_bounds.py) of every stored and forwarded body: what it
    accepts orjson encodes and decodes to an equal value; what it refuses names where."""
    found = list(json_violations(value, (), max_depth=5))
    if not found:
        assert orjson.loads(orjson.dumps(value)) == value
    for path, message in found:
        assert isinstance(path, str) and message


@FUZZ
@given(st.one_of(JSON, st.builds(lambda j: _replace_somewhere(PUBLISH_SEED["notification"], ["alert"], j), JSON)))
def test_notification_objects_validate_or_refuse(value: Any) -> None:
    accepts_or_refuses(lambda: NotificationObject.model_validate(value), ValidationError, what=value)


# ---------------------------------------------------------------- workflow filters and templates

FIELDS = [
    {"id": "mag", "path": "quake.magnitude", "values": [{"type": "number", "operators": [">=", "<", "IN"]}]},
    {"id": "area", "path": "quake.area", "site": True, "values": [{"type": "string", "operators": ["=", "IN"]}]},
    {"id": "flag", "path": "flag", "values": [{"type": "boolean", "operators": ["="]}]},
]
FILTER_SEED = {
    "all": [{"field": "mag", "operator": ">=", "value": 5}, {"field": "area", "operator": "IN", "value": ["x"]}]
}


@FUZZ
@given(
    st.one_of(
        JSON,
        st.builds(
            lambda j, p: _replace_somewhere(FILTER_SEED, p, j), JSON, st.sampled_from(list(_paths(FILTER_SEED, [])))
        ),
    ),
    JSON,
)
@example({"all": [{"any": [{"all": []}]}] * 50}, {})
@example({"not": {"not": {"not": {}}}}, None)
@example({"field": "mag", "operator": "IN", "value": [1, 2**63]}, {})
@example({"field": "mag", "operator": ">=", "value": -(2**63) - 1}, {})
def test_filters_validate_or_refuse_and_compiled_ones_evaluate(node: Any, data: Any) -> None:
    with bounded(node):
        errors = validate_filter(node, FIELDS)
    assert all(isinstance(path, str) and path.startswith("filter") for path, _ in errors)
    if errors:
        with pytest.raises(InvalidFilter):
            compile_filter(node, FIELDS)
        return
    assert orjson.loads(orjson.dumps(node)) == node, "an accepted filter is stored and traced by orjson"
    compiled = compile_filter(node, FIELDS)
    with bounded((node, data)):
        matched_fast = compiled.matches(data)
        traced, clauses = compiled.evaluate(data)
        assert matched_fast is traced and isinstance(clauses, list), "the traced answer is the fast one"
        matched, detail = site_matches(["x", "y"], FIELDS, data)
        assert isinstance(matched, bool) and detail["result"] is matched


@FUZZ
@given(texts(["{event.name}: {data.quake.magnitude}", "[{decision}] {data.a.b.c}", "{{}}{"]), JSON)
def test_templates_render_any_text_against_any_data(template: str, data: Any) -> None:
    with bounded(template):
        assert isinstance(render_template(template, {"data": data, "event": {"name": "n"}}), str)
