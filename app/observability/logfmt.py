"""One structured log line: ``event key=value key="quoted value"`` (logfmt).

Callers pass only what is safe at INFO: ids, names, codes, counts, timings — never a token,
a secret or an event body.
"""

from __future__ import annotations

import re
from typing import Any

_NEEDS_QUOTES = re.compile(r"[^A-Za-z0-9_\-.:/@+]").search


def _value(value: Any) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else str(value)
    if text and _NEEDS_QUOTES(text) is None:
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def line(event: str, **fields: Any) -> str:
    """``event`` followed by the fields in order, each value quoted when it needs to be."""
    return " ".join([event, *[f"{key}={_value(value)}" for key, value in fields.items()]])
