"""A loopback HTTP/1.1 server speaking raw bytes, for the client tests that need answers no
framework would send (interim 1xx, trailers, garbage, connections dropped while idle)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One request's head (through the blank line); its body, by ``Content-Length``, is read and dropped."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")),
        0,
    )
    await reader.readexactly(length)
    return head


@asynccontextmanager
async def loopback_server(
    serve: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> AsyncIterator[int]:
    """``serve`` each connection on 127.0.0.1 (a client going away ends it quietly, and it is
    closed after); yields the port."""

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await serve(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
