"""What every JSON body the service stores or forwards must fit: one validator for all of them.

The worker encodes records and traces with orjson, which refuses integers beyond 64 bits, and
the API answers stored bodies through serializers with a nesting limit. A body the API accepted
but the pipeline cannot carry is a ``500`` (which the spec tells publishers to retry forever) or a
stored row that breaks every later read. So the API refuses, with ``422 VAL-001`` and before
storing anything:

- an integer outside the signed 64-bit range, :data:`INT_MIN` .. :data:`INT_MAX`;
- a number that is not finite (``1e400`` parses as infinity; ``NaN``);
- nesting deeper than the limit (the publish body's ``TOCSIN_MAX_PUBLISH_DATA_DEPTH``);
- text (a string or an object's key) holding the NUL character U+0000, which PostgreSQL's text and
  jsonb refuse: accepted, such an event could never be stored, so never decided.

Depth counts containers: the root object is level 1. The walk is iterative, goes no deeper than
the limit and reports at most one violation of each kind. :func:`may_exceed` is the cheap check
on the raw body that decides whether a walk is needed at all: a body with fewer ``{``/``[`` than
the limit cannot nest deeper, and one without a run of 19 digits or a three-digit exponent
cannot hold a number out of range, and one without the escape ``\\u0000`` no NUL (JSON text cannot
carry it unescaped).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, Final

INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**63 - 1
RANGE_MESSAGE: Final = f"integers must be within the signed 64-bit range ({INT_MIN} to {INT_MAX})"
FINITE_MESSAGE: Final = "numbers must be finite (a JSON number too large for a double is refused)"
NUL_MESSAGE: Final = "text must not contain the NUL character (U+0000)"

# A body "may hold a number out of range" when it has a run of 19 digits, an exponent of three digits
# or more (e or E, an optional sign, then digits: ``[eE][+-]?0*\d{3}``), or NaN or Infinity. Searched
# on a copy where every digit is "0", e and E are "e" and signs "+": five substring searches in C,
# about a third of the time of the regular expression they stand for (a publish, and every request
# of a batch, pays it). tests/unit/test_json_bounds_scan.py checks that they agree.
_CLASSES = bytes(
    ord("0") if chr(c).isdigit() and c < 128 else ord("e") if c in b"eE" else ord("+") if c in b"+-" else ord(" ")
    for c in range(256)
)
_SUSPECT_NUMBER = re.compile(rb"\d{19}|[eE][+-]?0*\d{3}|NaN|Infinity")  # what suspect_number() finds

# (field path as the API reports it, message)
Violation = tuple[str, str]


def number_problem(value: Any) -> str | None:
    """Why the number ``value`` cannot be carried, or None (also for anything not a number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if INT_MIN <= value <= INT_MAX else RANGE_MESSAGE
    if isinstance(value, float) and not math.isfinite(value):
        return FINITE_MESSAGE
    return None


def may_exceed(body: bytes, max_depth: int | None) -> bool:
    """False when ``body`` cannot hold a violation (see the module text); True means: walk it."""
    if max_depth is not None and body.count(b"{") + body.count(b"[") > max_depth:
        return True
    return b"\\u0000" in body or suspect_number(body)


def suspect_number(body: bytes) -> bool:
    """Whether ``body`` matches :data:`_SUSPECT_NUMBER`, found without the regular expression."""
    classes = body.translate(_CLASSES)
    return (
        b"0000000000000000000" in classes
        or b"e000" in classes
        or b"e+000" in classes
        or b"NaN" in body
        or b"Infinity" in body
    )


def _path(parts: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in parts)


def json_violations(root: Any, prefix: tuple[str | int, ...] = (), max_depth: int | None = None) -> Iterator[Violation]:
    """Out-of-range numbers, text holding NUL and (with ``max_depth``) too deep nesting inside one
    parsed JSON value."""
    seen: set[str] = set()
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(root, prefix, 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict | list):
            if max_depth is not None and depth > max_depth:
                if "depth" not in seen:
                    seen.add("depth")
                    yield _path(path), f"nested deeper than {max_depth} levels"
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and "\x00" in key and "text" not in seen:
                    seen.add("text")
                    yield _path((*path, key.replace("\x00", "\\u0000"))), NUL_MESSAGE
                if isinstance(item, dict | list | int | float | str):
                    stack.append((item, (*path, key), depth + 1))
        elif isinstance(value, str):
            if "\x00" in value and "text" not in seen:
                seen.add("text")
                yield _path(path), NUL_MESSAGE
        elif (problem := number_problem(value)) is not None and "number" not in seen:
            seen.add("number")
            yield _path(path), problem
        if len(seen) == 3 or (max_depth is None and seen):
            return
