"""The bench's alternating-phase measure of tracing's cost (tests/bench/trace_ab.py)."""

from __future__ import annotations

from tests.bench.trace_ab import cost


def _phase(on: bool, start: float, loop_us: float, publishes: int, export_us: float = 0.0) -> dict[str, object]:
    return {
        "on": on,
        "start": start,
        "end": start + 2,
        "loop_ns": loop_us * 1e3 * publishes,
        "publishes": publishes,
        "export_ns": export_us * 1e3,
    }


def test_the_cost_compares_the_phases_inside_the_window_with_the_export_charged_to_the_traced() -> None:
    phases = [
        _phase(False, 0, 500, 100),  # warm-up: outside the window
        _phase(True, 2, 110, 1000, export_us=2000),
        _phase(False, 4, 100, 1000, export_us=1000),
        _phase(True, 6, 110, 1000),
        _phase(False, 8, 100, 1000),
        _phase(True, 10, 900, 10),  # ends after the window
    ]
    measured = cost(phases, start=2, end=11)
    assert measured["phases"] == 4
    assert (measured["traced"], measured["untraced"]) == (2000, 2000)
    assert (measured["loop_on_us"], measured["loop_off_us"], measured["export_us"]) == (110.0, 100.0, 1.5)
    assert measured["cost"] == 0.115  # (110 + 1.5) / 100 - 1
    assert measured["rate_ratio"] == 1.0


def test_the_rate_ratio_compares_publishes_per_second_of_the_two_kinds_of_phase() -> None:
    phases = [_phase(True, 0, 110, 900), _phase(False, 2, 100, 1000), _phase(True, 4, 110, 900)]
    measured = cost(phases, start=0, end=6)
    assert measured["rate_ratio"] == 0.9  # 1,800 in 4 s against 1,000 in 2 s


def test_no_phase_of_a_kind_gives_no_cost() -> None:
    assert cost([_phase(True, 2, 110, 1000)], start=0, end=10)["cost"] is None
