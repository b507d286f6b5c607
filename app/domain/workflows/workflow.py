"""Workflows: their definition, the mode rule, and the action requests they produce."""

from __future__ import annotations

import re
from collections.abc import Collection
from enum import StrEnum
from functools import lru_cache
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, EmailStr, Field

from app.domain.delivery.push import MODE_STAMPS, RELEASE_PREFIX
from app.domain.events.publish import PublishStatus
from app.domain.shared.ids import effect_id


class ActionType(StrEnum):
    RUN_OPERATION_BOOK = "RUN_OPERATION_BOOK"
    SEND_PUSH_NOTIFICATION = "SEND_PUSH_NOTIFICATION"
    SEND_EMAIL = "SEND_EMAIL"
    SEND_WEBHOOK = "SEND_WEBHOOK"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunOperationBook(_Strict):
    type: Literal["RUN_OPERATION_BOOK"]
    operation_book_id: str = Field(min_length=1, max_length=64)


class SendPush(_Strict):
    type: Literal["SEND_PUSH_NOTIFICATION"]
    user_ids: list[str] = Field(default_factory=list, max_length=1000)
    group_ids: list[str] = Field(default_factory=list, max_length=1000)


class SendEmail(_Strict):
    type: Literal["SEND_EMAIL"]
    to: list[EmailStr] = Field(min_length=1, max_length=100)
    subject: str = Field(max_length=1024)
    body: str = Field(max_length=65536)


class SendWebhook(_Strict):
    type: Literal["SEND_WEBHOOK"]
    url: str = Field(max_length=2048)
    secret: str | None = Field(default=None, max_length=256)


Action = Annotated[RunOperationBook | SendPush | SendEmail | SendWebhook, Field(discriminator="type")]


class WorkflowStatus(StrEnum):
    ACTIVE = "ACTIVE"
    INACTIVE = "INACTIVE"


_STAMPS: dict[str, str] = {str(mode): stamp for mode, stamp in MODE_STAMPS.items()}  # no enum lookup per call
_MODES = frozenset(PublishStatus)  # (Enum.__members__ builds a new mapping on every access)


def mode_matches(workflow_mode: str, publish_status: str) -> bool:
    """ACTUAL workflows run only for ACTUAL publishes, DRILL only for DRILL, TEST only for TEST."""
    return workflow_mode == publish_status and workflow_mode in _MODES


def release_reaches(episode_workflows: Collection[str] | None, workflow_id: str) -> bool | None:
    """Whether an episode's release (RESOLVE) reaches a workflow: it does exactly when the
    workflow ran for one of the episode's NOTIFYs (the opening one or a later one), whatever the
    releasing event's data, sites or target organizations (a release ends what was notified; its
    event is the tick or the value that went below the threshold). ``None`` when the episode's
    workflows are not known (a state stored before they were kept): the workflow's filter and
    sites decide, as for any event. The mode rule applies either way."""
    if episode_workflows is None:
        return None
    return workflow_id in episode_workflows


def action_effect_id(event_id: str, workflow_id: str, index: int, decision: str) -> str:
    """Deterministic id of one action's effect for one event (DESIGN.md)."""
    return effect_id("act", event_id, workflow_id, str(index), decision)


_PLACEHOLDER = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_.]*)\}")


@lru_cache(maxsize=4096)
def _compile_template(template: str) -> tuple[tuple[str, tuple[str, ...] | None, str], ...]:
    """A template as ``(literal, path or None, placeholder as written)`` parts, parsed once."""
    parts: list[tuple[str, tuple[str, ...] | None, str]] = []
    pos = 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append((template[pos : match.start()], tuple(match.group(1).split(".")), match.group(0)))
        pos = match.end()
    parts.append((template[pos:], None, ""))
    return tuple(parts)


def render_template(template: str, context: dict[str, Any]) -> str:
    """Replace ``{event.name}``, ``{data.a.b}``, ``{decision}``… ; unknown names stay as written."""
    out: list[str] = []
    for literal, path, written in _compile_template(template):
        out.append(literal)
        if path is None:
            continue
        value: Any = context
        for part in path:
            if not isinstance(value, dict) or part not in value:
                value = written
                break
            value = value[part]
        else:
            value = "" if value is None else str(value)
        out.append(value)
    return "".join(out)


def stamped(text: str, mode: str, decision: str) -> str:
    """``text`` with the exercise stamp of ``mode`` and, for a RESOLVE, the release prefix — the
    same stamps as the push title (app/domain/delivery/push.py), on every output (e-mail subject, incident
    title), so nobody mistakes an exercise for the real thing or a release for a new alert."""
    release = RELEASE_PREFIX if decision == "RESOLVE" else ""
    return f"{_STAMPS.get(mode, '')}{release}{text}"


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def loopback_http_allowed(host: str | None, port: int | None, loopback_ports: frozenset[int]) -> bool:
    """Plain http to a named loopback receiver whose port the operator listed (``TOCSIN_LOOPBACK_TARGETS``)."""
    return host is not None and host.lower() in LOOPBACK_NAMES and (port or 80) in loopback_ports


def webhook_url_problem(url: str, *, allow_http: bool, loopback_ports: frozenset[int] = frozenset()) -> str | None:
    """Why a webhook URL cannot be saved (None when it can): an absolute https URL with a host
    and no credentials; plain http only where private networks are allowed (tests) or to a
    loopback receiver listed in ``TOCSIN_LOOPBACK_TARGETS`` (local development).
    Where it points is checked at every delivery by the SSRF guard, on the address connected to."""
    if any(c <= " " or c == "\x7f" for c in url):
        # urlsplit drops leading spaces and every tab or newline: what is saved must be what is parsed
        return "a webhook URL has no spaces or control characters"
    try:
        parsed = urlsplit(url)
    except ValueError:  # ``http://[::1``, a bracketed host that is no IP, a netloc that NFKC changes
        return "the webhook URL is malformed"
    try:
        port = parsed.port
    except ValueError:
        return "the port of the webhook URL is malformed"
    http_ok = allow_http or loopback_http_allowed(parsed.hostname, port, loopback_ports)
    if parsed.scheme not in ("https", "http") or (parsed.scheme == "http" and not http_ok):
        return "a webhook URL is https" + (" (or http where private networks are allowed)" if allow_http else "")
    if not parsed.hostname:
        return "a webhook URL has a host"
    if parsed.username is not None or parsed.password is not None:
        return "credentials in a webhook URL are refused (the signature authenticates the sender)"
    if parsed.fragment:
        return "a webhook URL has no fragment"
    try:
        parsed.port  # noqa: B018 - raises for a malformed port
    except ValueError:
        return "the port of the webhook URL is malformed"
    return None
