"""The publish hot path's cheap check for numbers out of range (app/domain/shared/json_bounds.py) finds
exactly what its regular expression finds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.domain.shared.json_bounds import _SUSPECT_NUMBER, suspect_number

TRICKY = b'0123456789eE+-NaInfity .x{}"\xd9\xa3'  # \xd9\xa3: UTF-8 of an Arabic-Indic digit


@given(st.binary(max_size=60) | st.lists(st.sampled_from(list(TRICKY)), max_size=60).map(bytes))
def test_the_scan_agrees_with_the_regular_expression(body: bytes) -> None:
    assert suspect_number(body) == (_SUSPECT_NUMBER.search(body) is not None)


def test_each_kind_is_found() -> None:
    for body in (b'{"a":1' + b"2" * 18 + b"}", b'{"a":1e400}', b'{"a":1E-0300}', b'{"a":NaN}', b'{"a":-Infinity}'):
        assert suspect_number(body), body
    for body in (b'{"a":1' + b"2" * 17 + b"}", b'{"a":1e40}', b'{"a":"e+12"}', b'{"region":"kanto"}'):
        assert not suspect_number(body), body
