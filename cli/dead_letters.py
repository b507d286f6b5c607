"""``tocsin dead-letters list`` and ``tocsin dead-letters replay ID…``: deliveries that exhausted their
retries (``GET …/dead_letters``, every page), and delivering them again now (``POST
…/dead_letters/{id}:replay``; the replay's outcome shows in the list and in the event's trace)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO, Any

import httpx
import orjson

from cli.profile import Target
from cli.remote_api import api_client, check, refusal, segment

COLUMNS = ("id", "kind", "status", "attempts", "replays", "event_id", "target", "last_error", "updated_at")


def dead_letters(client: httpx.Client) -> Iterator[dict[str, Any]]:
    """Every dead letter of the organization, following the cursor."""
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
        page = check(client.get("/dead_letters", params=params), "the dead-letter list")
        yield from page["items"]
        cursor = page.get("next_cursor")
        if not cursor:
            return


def _cell(value: Any, width: int = 40) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def cmd_dead_letters_list(target: Target, *, as_json: bool = False, out: IO[str] | None = None) -> int:
    out = out or sys.stdout
    with api_client(target) as client:
        rows = list(dead_letters(client))
    if as_json:
        out.write("".join(orjson.dumps(row).decode() + "\n" for row in rows))
        return len(rows)
    table = [COLUMNS, *[tuple(_cell(row.get(c)) for c in COLUMNS) for row in rows]]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    for row in table:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n")
    return len(rows)


def cmd_dead_letters_replay(
    target: Target,
    delivery_ids: list[str],
    *,
    out: IO[str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> None:
    """Replay each; every one is tried, and the command fails (exit 1) if any was refused."""
    out = out or sys.stdout
    failed: list[str] = []
    with api_client(target, transport=transport) as client:
        for delivery_id in delivery_ids:
            response = client.post(f"/dead_letters/{segment(delivery_id)}:replay")
            if response.is_success:
                out.write(f"{delivery_id}: {response.json().get('status', 'PENDING')}\n")
            else:
                failed.append(f"{delivery_id}: {refusal(response)}")
    if failed:
        raise SystemExit("tocsin: replay refused:\n" + "\n".join(failed))
