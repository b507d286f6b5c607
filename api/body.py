"""Reading a JSON body with the size cap and media-type check (413 / 415)."""

from __future__ import annotations

from fastapi import Request

from app.errors import BodyTooLarge, UnsupportedMediaType


async def read_json_body(request: Request, limit: int) -> bytes:
    """The raw body, refused when it is not JSON or larger than ``limit`` bytes."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise UnsupportedMediaType("Content-Type must be application/json")
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise BodyTooLarge("invalid Content-Length")
        if int(declared) > limit:
            raise BodyTooLarge(f"body larger than {limit} bytes")
        return await request.body()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"body larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
