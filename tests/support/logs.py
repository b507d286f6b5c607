"""The API's and the workers' log files, read as records (app/observability/logs.py: one JSON
object or one logfmt line per record; the test stacks write JSON, their output being a file)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from app.observability.logs import parse_line


def records(log: Path) -> Iterator[dict[str, Any]]:
    """Every record of ``log`` (nothing when it does not exist); a line that is not a record is
    given as ``{"unparsed": line}`` (``assert_all_records`` fails on it)."""
    if not log.exists():
        return
    for line in log.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            yield parse_line(line)
        except ValueError:
            yield {"unparsed": line}


def all_records(logs: Iterable[Path]) -> Iterator[tuple[Path, dict[str, Any]]]:
    for log in logs:
        for record in records(log):
            yield log, record


def messages(log: Path, logger: str | None = None) -> list[str]:
    """The ``event`` (the message) of every record of ``log`` (of ``logger``, when given)."""
    return [str(r.get("event")) for r in records(log) if logger is None or r.get("logger") == logger]


def text_of(record: dict[str, Any]) -> str:
    """What an ``allowed`` pattern is matched against: the record's message, or the unparsed line."""
    return str(record["unparsed"]) if "unparsed" in record else str(record.get("event", ""))
