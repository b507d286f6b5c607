"""``tocsin publish TOPIC [FILE|-]``: publish requests from a file or stdin.

- one JSON object (pretty-printed or not): one publish (``…/publish``);
- a JSON array, or NDJSON (one request per line): batch publishes (``…/publish:batch``) of up to
  ``--batch-size`` requests, NDJSON read and sent as it streams in, so a long stream never sits in
  memory; a batch is stored whole or not at all.

Each accepted event's server id goes to stdout (one per line, for ``events show``); progress goes to
stderr. A refused batch stops the command (exit 1) naming the input lines at fault; the batches
before it stay published (the count is said). ``429`` and ``503`` are retried after their
``Retry-After`` (a few times): nothing of a refused batch was stored, so resending it is safe.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import httpx
import orjson

from app.settings.limits import InputLimits
from cli.profile import Target
from cli.remote_api import api_client, check, refusal, segment

RETRIES = 5
MAX_BATCH_BYTES = 1024 * 1024  # well under the server's batch limit (TOCSIN_MAX_PUBLISH_BATCH_BYTES, 4 MiB)
# The most requests a batch may hold on a server with the default TOCSIN_MAX_PUBLISH_BATCH_ITEMS: a larger
# --batch-size could only be refused (422, after the batches before it were published).
MAX_BATCH_SIZE: int = InputLimits.model_fields["publish_batch_items"].default


@dataclass
class Progress:
    """What was published so far, told on stderr (one line rewritten on a terminal)."""

    err: IO[str]
    published: int = 0

    def add(self, count: int) -> None:
        self.published += count
        if self.err.isatty():
            self.err.write(f"\rpublished {self.published} events")
        else:
            self.err.write(f"published {self.published} events\n")
        self.err.flush()

    def done(self) -> None:
        if self.err.isatty() and self.published:
            self.err.write("\n")


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of every non-blank line."""
    for number, line in enumerate(stream, start=1):
        if line.strip():
            yield number, line.rstrip(b"\r\n")


def _batches(lines: Iterable[tuple[int, bytes]], size: int) -> Iterator[list[tuple[int, bytes]]]:
    batch: list[tuple[int, bytes]] = []
    held = 0
    for number, line in lines:
        if batch and (len(batch) == size or held + len(line) > MAX_BATCH_BYTES):
            yield batch
            batch, held = [], 0
        batch.append((number, line))
        held += len(line) + 1
    if batch:
        yield batch


def _post(client: httpx.Client, path: str, content: bytes, media: str, err: IO[str]) -> httpx.Response:
    """POST, retrying 429 and 503 after their Retry-After (nothing of a refused publish was stored)."""
    for attempt in itertools.count(1):
        response = client.post(path, content=content, headers={"Content-Type": media})
        if response.status_code not in (429, 503) or attempt > RETRIES:
            return response
        wait = float(response.headers.get("Retry-After") or 1)
        err.write(f"tocsin: {response.status_code}, retrying in {wait:g} s\n")
        time.sleep(wait)
    raise AssertionError("unreachable")


def _refused_lines(response: httpx.Response, batch: list[tuple[int, bytes]], unit: str) -> str:
    """The refusal of a batch, each refused request named by its input line."""
    try:
        items = response.json().get("details", {}).get("items")
    except (ValueError, AttributeError):
        items = None
    if not isinstance(items, list):
        return refusal(response)
    said = [refusal(response).splitlines()[0]]
    for item in items:
        index = item.get("index")
        line = batch[index][0] if isinstance(index, int) and 0 <= index < len(batch) else "?"
        for field in item.get("fields", ()):
            said.append(f"  {unit} {line}: {field.get('field') or '(request)'}: {field.get('message')}")
    return "\n".join(said)


def _smaller_batches(response: httpx.Response) -> str:
    """A hint when the server refused the batch for holding more requests than it takes (a server set
    below the default TOCSIN_MAX_PUBLISH_BATCH_ITEMS)."""
    try:
        fields = response.json().get("details", {}).get("fields") or []
    except (ValueError, AttributeError):
        return ""
    if any(
        isinstance(f, dict) and f.get("type") == "limit_exceeded" and "BATCH_ITEMS" in str(f.get("message"))
        for f in fields
    ):
        return "\n  the server takes fewer requests per batch: give a smaller --batch-size"
    return ""


def _send_batches(
    client: httpx.Client,
    topic: str,
    batches: Iterable[list[tuple[int, bytes]]],
    out: IO[str],
    err: IO[str],
    unit: str = "line",
) -> int:
    progress = Progress(err)
    for batch in batches:
        body = b"\n".join(line for _n, line in batch) + b"\n"
        response = _post(client, f"/workflow_topics/{segment(topic)}/publish:batch", body, "application/x-ndjson", err)
        if not response.is_success:
            progress.done()
            raise SystemExit(
                f"tocsin: the batch of {unit}s {batch[0][0]}-{batch[-1][0]} was refused, nothing of it stored "
                f"({progress.published} events of earlier batches were published):\n"
                + _refused_lines(response, batch, unit)
                + _smaller_batches(response)
            )
        ids: list[str] = response.json()["ids"]
        out.write("".join(f"{event_id}\n" for event_id in ids))
        out.flush()
        progress.add(len(ids))
    progress.done()
    return progress.published


def cmd_publish(
    target: Target,
    topic: str,
    source: str,
    *,
    batch_size: int = 500,
    stdin: IO[bytes] | None = None,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> int:
    """Publish what ``source`` (a path, or ``-`` for stdin) holds to ``topic``; the events published."""
    out, err = out or sys.stdout, err or sys.stderr
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise SystemExit(
            f"tocsin: --batch-size must be between 1 and {MAX_BATCH_SIZE}, the most requests the server takes "
            f"in one batch (TOCSIN_MAX_PUBLISH_BATCH_ITEMS); nothing was sent"
        )
    stream = (stdin or sys.stdin.buffer) if source == "-" else open(source, "rb")  # noqa: SIM115 - closed below
    try:
        with api_client(target, transport=transport) as client:
            return _publish(client, topic, stream, batch_size, out, err)
    finally:
        if source != "-":
            stream.close()


def _publish(client: httpx.Client, topic: str, stream: IO[bytes], batch_size: int, out: IO[str], err: IO[str]) -> int:
    lines = _lines(stream)
    first = next(lines, None)
    if first is None:
        raise SystemExit("tocsin: nothing to publish (the input is empty)")
    head = first[1].lstrip()
    if head.startswith(b"{") and _is_object(head):  # NDJSON (a one-line object is one line of it)
        return _send_batches(client, topic, _batches(itertools.chain([first], lines), batch_size), out, err)
    text = first[1] + b"\n" + b"\n".join(line for _n, line in lines)
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise SystemExit(f"tocsin: the input is neither JSON nor NDJSON ({exc})") from None
    if isinstance(document, dict):
        response = _post(client, f"/workflow_topics/{segment(topic)}/publish", text, "application/json", err)
        event_id = check(response, "the publish")["id"]
        out.write(f"{event_id}\n")
        Progress(err).add(1)
        return 1
    if isinstance(document, list):
        numbered = [(index + 1, orjson.dumps(request)) for index, request in enumerate(document)]
        return _send_batches(client, topic, _batches(numbered, batch_size), out, err, unit="item")
    raise SystemExit("tocsin: the input must be a publish request (a JSON object), an array of them, or NDJSON")


def _is_object(line: bytes) -> bool:
    try:
        parsed: Any = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(parsed, dict)
