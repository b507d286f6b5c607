"""``tocsin events show ID``: an event's trace (``GET …/events/{id}``), the server's event id that a
publish answered (``tocsin publish`` prints it): each step the event went through, read top down."""

from __future__ import annotations

import sys
from typing import IO, Any

import httpx
import orjson

from cli.profile import Target
from cli.remote_api import api_client, check, segment


def _step_line(step: dict[str, Any]) -> str:
    name = step.get("step", "?")
    rest = {k: v for k, v in step.items() if k != "step" and v not in (None, [], {})}
    said = ", ".join(f"{k}={v if isinstance(v, str) else orjson.dumps(v).decode()}" for k, v in rest.items())
    return f"  {name}: {said}" if said else f"  {name}"


def cmd_events_show(
    target: Target,
    event_id: str,
    *,
    as_json: bool = False,
    out: IO[str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> None:
    out = out or sys.stdout
    with api_client(target, transport=transport) as client:
        trace = check(client.get(f"/events/{segment(event_id)}"), f"the trace of {event_id}")
    if as_json:
        out.write(orjson.dumps(trace, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    out.write(f"event {trace.get('id', event_id)} accepted at {trace.get('accepted_at') or '?'}\n")
    for step in trace.get("steps", []):
        out.write(_step_line(step) + "\n")
