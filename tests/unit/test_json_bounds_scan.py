"""The publish hot path's cheap check for numbers out of range (app/domain/shared/json_bounds.py) finds
exactly what its regular expression finds."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.domain.shared.json_bounds import _SUSPECT_NUMBER, NUL_MESSAGE, json_violations, may_exceed, suspect_number

TRICKY = b'0123456789eE+-NaInfity .x{}"\xd9\xa3'  # \xd9\xa3: UTF-8 of an Arabic-Indic digit


@given(st.binary(max_size=60) | st.lists(st.sampled_from(list(TRICKY)), max_size=60).map(bytes))
def test_the_scan_agrees_with_the_regular_expression(body: bytes) -> None:
    assert suspect_number(body) == (_SUSPECT_NUMBER.search(body) is not None)


def test_each_kind_is_found() -> None:
    for body in (b'{"a":1' + b"2" * 18 + b"}", b'{"a":1e400}', b'{"a":1E-0300}', b'{"a":NaN}', b'{"a":-Infinity}'):
        assert suspect_number(body), body
    for body in (b'{"a":1' + b"2" * 17 + b"}", b'{"a":1e40}', b'{"a":"e+12"}', b'{"region":"kanto"}'):
        assert not suspect_number(body), body


def test_text_holding_nul_is_found_and_named() -> None:
    """PostgreSQL's text and jsonb refuse U+0000: an event holding it could be accepted and then never
    stored, so never decided. The body's escape sends it to the walk, which names the field."""
    assert may_exceed(b'{"a":"x\\u0000"}', None)
    assert not may_exceed(b'{"a":"x\\u0001"}', None)
    cases: list[tuple[Any, str]] = [
        ({"data": {"a": "x\x00y"}}, "data.a"),
        ({"data": {"k\x00": 1}}, "data.k\\u0000"),
        ({"event": {"id": "nul\x00id"}}, "event.id"),
        ({"data": {"list": [1, ["\x00"]]}}, "data.list.1.0"),
    ]
    for value, field in cases:
        assert list(json_violations(value)) == [(field, NUL_MESSAGE)], value
    assert list(json_violations({"data": {"a": "\\u0000 as text", "b": "\u202e"}})) == []
