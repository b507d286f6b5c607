"""Milliseconds since the epoch, the unit of event time: one conversion each way."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from app.clock import now_ms
from app.domain.shared.milliseconds import iso_ms, ms_to_datetime, to_ms


def test_seconds_become_whole_milliseconds_truncated_like_int() -> None:
    assert to_ms(1_700_000_000.9999) == 1_700_000_000_999
    assert to_ms(0.0015) == 1
    assert to_ms(-0.0015) == -1  # toward zero, as int() did at every call site before


def test_iso_ms_has_three_decimals_and_z() -> None:
    assert iso_ms(1_700_000_000_000) == "2023-11-14T22:13:20.000Z"
    assert iso_ms(1_700_000_000_007) == "2023-11-14T22:13:20.007Z"


@given(st.integers(min_value=0, max_value=253_402_300_799_999))
def test_ms_to_datetime_and_iso_ms_name_the_same_moment(ms: int) -> None:
    assert ms_to_datetime(ms).tzinfo is UTC
    assert datetime.fromisoformat(iso_ms(ms).replace("Z", "+00:00")) == datetime.fromtimestamp(
        ms / 1000, tz=UTC
    ).replace(microsecond=ms % 1000 * 1000)


def test_now_ms_is_the_wall_clock_in_milliseconds() -> None:
    before = to_ms(datetime.now(UTC).timestamp())
    assert before <= now_ms() <= before + 60_000
