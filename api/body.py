"""Reading a JSON body with the size cap and media-type check (413 / 415).

The checks work on raw header values and the ASGI ``receive`` callable, so the FastAPI
route and the publish fast path (api/fastpath.py) share them.
"""

from __future__ import annotations

from starlette.requests import ClientDisconnect
from starlette.types import Receive

from app.errors import BodyTooLarge, UnsupportedMediaType


def check_json_headers(content_type: str, content_length: str | None, limit: int) -> None:
    """Refuse a body that is not JSON (415) or declares more than ``limit`` bytes (413)."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise UnsupportedMediaType("Content-Type must be application/json")
    if content_length is not None:
        if not content_length.isdigit():
            raise BodyTooLarge("invalid Content-Length")
        if int(content_length) > limit:
            raise BodyTooLarge(f"body larger than {limit} bytes")


async def receive_body(receive: Receive, limit: int) -> bytes:
    """The whole body from ASGI ``http.request`` messages, refused past ``limit`` bytes.

    Raises :class:`ClientDisconnect` when the client went away before sending it all.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect()
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"body larger than {limit} bytes")
        if not message.get("more_body", False):
            if not chunks:
                return chunk
            chunks.append(chunk)
            return b"".join(chunks)
        chunks.append(chunk)
