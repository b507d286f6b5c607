"""``tocsin events show ID``: an event's trace (``GET …/events/{id}``), the server's event id that a
publish answered (``tocsin publish`` prints it): each step the event went through, read top down.

For people: times in RFC 3339 (UTC) where the trace keeps epoch milliseconds (``at_ms`` is shown as
``at``), the control state before and after on lines of their own, and one line per workflow
considered (sharing, mode, release, sites, each filter condition with the value read, actions).
``--json`` prints the trace as the API answers it. A 404 says "no such event" for an id that is not
an event id at all, and "no trace yet" for one that is (the worker has not decided it yet)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any, Final

import httpx
import orjson

from app.domain.shared.ids import has_id_form
from cli.profile import Target
from cli.remote_api import api_client, check, segment

# Keys ending in ``_ms`` that hold a length of time, not an epoch time.
DURATIONS: Final = frozenset({"duration_ms"})

INDENT: Final = "  "


def is_event_id(value: str) -> bool:
    """Whether ``value`` has the form of a server event id (it may still be unknown): ``evt_`` and
    26 characters of Crockford's base32, as the API checks it too."""
    return has_id_form(value, "evt")


def rfc3339(epoch_ms: float) -> str:
    """Epoch milliseconds as RFC 3339 in UTC, to the millisecond: ``2026-01-01T00:00:00.000Z``."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _iso(text: str) -> str:
    """An ISO 8601 time the API gave, in the same form as :func:`rfc3339` (as given if unparsable)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def readable(value: Any) -> Any:
    """``value`` with every epoch-millisecond time (a key ending in ``_ms``, not a duration) shown as
    RFC 3339 under the key without its ``_ms``, at any depth."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if (
                isinstance(key, str)
                and key.endswith("_ms")
                and key not in DURATIONS
                and isinstance(item, int | float)
                and not isinstance(item, bool)
            ):
                out[key[:-3]] = rfc3339(item)
            else:
                out[key] = readable(item)
        return out
    if isinstance(value, list):
        return [readable(item) for item in value]
    return value


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def _json(value: Any) -> str:
    """A value read from or compared with ``data``, as JSON: the string ``"6"`` is not the number 6."""
    return orjson.dumps(value).decode()


def _pairs(detail: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
    """``key=value, …`` of what the step says (nothing said: null, empty lists and objects left out)."""
    shown = readable({k: v for k, v in detail.items() if k not in skip and v not in (None, [], {})})
    return ", ".join(f"{k}={_text(v)}" for k, v in shown.items())


def _clause(clause: dict[str, Any]) -> str:
    """One filter condition: ``magnitude >= 5 (read 6.1): true``; ``(absent)`` when the path is not there."""
    said = f"{clause.get('field', '?')} {clause.get('operator', '?')}"
    if "value" in clause:
        said += f" {_json(clause['value'])}"
    read = f"read {_json(clause['actual'])}" if "actual" in clause else "absent"
    return f"{said} ({read}): {'true' if clause.get('result') else 'false'}"


def _site(site: dict[str, Any]) -> str:
    if site.get("reason"):
        return f"sites: {site['reason']}"
    read = f"{site.get('site_field')}={_json(site['value'])}" if "value" in site else f"{site.get('site_field')} absent"
    return f"sites {_text(site.get('sites'))}: {read}, {'true' if site.get('result') else 'false'}"


def _filter(filter: dict[str, Any]) -> str:
    if filter.get("error"):
        return f"filter: {filter['error']}"
    clauses = filter.get("clauses") or []
    if not clauses:
        return "no filter"
    verdict = "passed" if filter.get("result") else "failed"
    return f"filter {verdict}: {', '.join(_clause(c) for c in clauses)}"


def _action(action: dict[str, Any]) -> str:
    return f"{action.get('type', '?')} {action.get('outcome', '')}".rstrip()


def workflow_line(entry: dict[str, Any]) -> str:
    """One workflow considered, on one line: the checks in the order they ran, then its actions, or
    ``not run`` after the check that stopped it."""
    if "workflow_id" not in entry:  # e.g. {"skipped": "topic no longer exists"}
        return _pairs(entry)
    head = f"{entry['workflow_id']} ({entry.get('mode', '?')})"
    if entry.get("organization_id"):
        head += f" of {entry['organization_id']}"
    parts: list[str] = []
    stopped = False
    shared = entry.get("shared")
    if isinstance(shared, dict):
        parts.append("shared" if shared.get("result") else f"not shared: {shared.get('reason')}")
        stopped = not shared.get("result")
    if not stopped:
        parts.append("mode matches" if entry.get("mode_matched") else "mode does not match the event's status")
        stopped = not entry.get("mode_matched")
    checks: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
        ("release", lambda r: f"release: {r.get('reason')}"),
        ("site", _site),
        ("filter", _filter),
    )
    for key, say in checks:
        detail = entry.get(key)
        if stopped or not isinstance(detail, dict) or (key == "site" and detail.get("sites") is None):
            continue
        parts.append(say(detail))
        stopped = detail.get("result") is False
    actions = entry.get("actions") or []
    if actions:
        parts.append("actions: " + ", ".join(_action(a) for a in actions))
    else:
        parts.append("not run" if stopped else "no action")
    return f"{head}: {'; '.join(parts)}"


def step_lines(step: dict[str, Any]) -> list[str]:
    """A trace step as lines, the first at one indent."""
    name = step.get("step", "?")
    if name == "workflows" and isinstance(step.get("workflows"), list):
        lines = [f"{INDENT}{name}:" if step["workflows"] else f"{INDENT}{name}: none considered"]
        lines += [f"{INDENT * 2}{workflow_line(entry)}" for entry in step["workflows"]]
        if step.get("other_organizations_workflows"):
            others = step["other_organizations_workflows"]
            lines.append(f"{INDENT * 2}and {others} workflow(s) of organizations receiving the topic")
        return lines
    if name == "control":
        said = _pairs(step, skip=("step", "before", "after"))
        lines = [f"{INDENT}{name}: {said}" if said else f"{INDENT}{name}"]
        for side in ("before", "after"):
            if isinstance(step.get(side), dict):
                lines.append(f"{INDENT * 2}{side}: {_pairs(step[side]) or 'empty'}")
        return lines
    said = _pairs(step, skip=("step",))
    return [f"{INDENT}{name}: {said}" if said else f"{INDENT}{name}"]


def render(trace: dict[str, Any], event_id: str) -> str:
    """The trace as ``tocsin events show`` prints it."""
    accepted = trace.get("accepted_at")
    lines = [f"event {trace.get('id', event_id)} accepted at {_iso(accepted) if accepted else '?'}"]
    for step in trace.get("steps", []):
        lines += step_lines(step)
    return "\n".join(lines) + "\n"


def no_trace(event_id: str) -> str:
    """What a 404 means for ``event_id``."""
    if not is_event_id(event_id):
        return (
            f"tocsin: no such event: {event_id!r} is not an event id (evt_ and 26 letters and digits, "
            "as a publish answers it)"
        )
    return (
        f"tocsin: no trace for {event_id} yet: the worker records it once it has decided the event, "
        "a second or so after the publish (--wait SECONDS waits for it)"
    )


def cmd_events_show(
    target: Target,
    event_id: str,
    *,
    as_json: bool = False,
    wait: float = 0,
    out: IO[str] | None = None,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Print the trace; a 404 says why there is none. ``wait``: seconds to keep asking while a
    well-formed id has no trace yet."""
    out = out or sys.stdout
    deadline = clock() + wait
    with api_client(target, transport=transport) as client:
        while True:
            response = client.get(f"/events/{segment(event_id)}")
            if response.status_code != 404:
                break
            if not is_event_id(event_id) or clock() >= deadline:
                raise SystemExit(no_trace(event_id))
            sleep(min(0.5, max(deadline - clock(), 0)))
        trace = check(response, f"the trace of {event_id}")
    if as_json:
        out.write(orjson.dumps(trace, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    out.write(render(trace, event_id))
