"""The request id (api/fastpath.py ``request_id``): the caller's ``X-Request-ID`` when it is safe
to log and echo as is, else a new one."""

from __future__ import annotations

import pytest

from api.fastpath import request_id


def _scope(*values: bytes) -> dict[str, object]:
    return {"headers": [(b"accept", b"*/*"), *((b"x-request-id", v) for v in values)]}


@pytest.mark.parametrize(
    "value", [b"rid-1", b"0af7651916cd43dd8448eb211c80319c", b"a.b:c/d@e+f=g_h", b"x" * 128, b"req_01m86"]
)
def test_a_safe_caller_id_is_kept(value: bytes) -> None:
    assert request_id(_scope(value)) == value


@pytest.mark.parametrize(
    "value", [b"", b"two words", b'quo"te', b"x" * 129, b"new\nline", "caf\u00e9".encode(), b"a\x00b", b"k=v;x"]
)
def test_an_unsafe_caller_id_is_replaced(value: bytes) -> None:
    made = request_id(_scope(value))
    assert made.startswith(b"req_") and made != value


def test_none_given_one_is_made_and_only_the_first_header_counts() -> None:
    assert request_id(_scope()).startswith(b"req_")
    assert request_id(_scope()) != request_id(_scope())
    assert request_id(_scope(b"first", b"second")) == b"first"
