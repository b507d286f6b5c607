"""The two load processes of the webhook bench, each in its own process so that neither the
publisher nor the receiver shares a GIL with the other (or with the bench's bookkeeping):

``python -m tests.bench.webhook_load receive PORT_FILE OUT [DELAY_S]``: an HTTP/1.1 keep-alive server
on loopback answering 204 (after DELAY_S seconds, default none: a slow receiver) and writing
``event_id monotonic_time`` for each webhook to OUT when stopped (SIGTERM).

``python -m tests.bench.webhook_load publish URL TOKEN RATE SECONDS KEYS OUT``: publishes at a
steady RATE per second over KEYS partition keys through 32 keep-alive connections (RATE if fewer), raw asyncio
HTTP (a client library would cost more CPU than the API it measures), and writes
``event_id monotonic_time_before_the_request`` per accepted publish to OUT.

Both use ``time.monotonic()`` (CLOCK_MONOTONIC: one clock for every process of the machine).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from urllib.parse import urlsplit

CONNECTIONS = 32


def _write(path: str, lines: list[str]) -> None:
    with open(path, "w") as f:  # once, at the end of the run: nothing else is waiting then
        f.writelines(line + "\n" for line in lines)


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return status, (await reader.readexactly(length) if length else b"")


async def publish(url: str, token: str, rate: int, seconds: int, keys: int, out: str) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    total = rate * seconds
    queue: asyncio.Queue[int] = asyncio.Queue()
    sent: list[tuple[str, float]] = []
    refused = 0

    async def connection() -> None:
        nonlocal refused
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while True:
                i = await queue.get()
                if i < 0:
                    return
                body = json.dumps(
                    {"status": "ACTUAL", "data": {"n": i}, "event_control": {"partition_key": f"k{i % keys}"}}
                ).encode()
                request = (
                    f"POST {parts.path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                ).encode() + body
                started = time.monotonic()
                writer.write(request)
                status, payload = await _read_response(reader)
                if status == 202:
                    sent.append((json.loads(payload)["id"], started))
                else:
                    refused += 1
        finally:
            writer.close()

    # no more connections than requests a second: an idle keep-alive connection is closed by the API
    workers = [asyncio.create_task(connection()) for _ in range(min(CONNECTIONS, rate))]
    start = time.monotonic()
    for i in range(total):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        queue.put_nowait(i)
    for _ in workers:
        queue.put_nowait(-1)
    await asyncio.gather(*workers)
    summary = json.dumps({"refused": refused, "behind_s": time.monotonic() - start - seconds})
    _write(out, [summary, *(f"{event_id} {at}" for event_id, at in sent)])


async def receive(port_file: str, out: str, delay_s: float = 0.0) -> None:
    arrived: dict[str, float] = {}

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = await reader.readexactly(length) if length else b""
                now = time.monotonic()
                event_id = json.loads(body).get("event_id") if body else None
                if event_id:
                    arrived.setdefault(event_id, now)
                if delay_s:
                    await asyncio.sleep(delay_s)
                writer.write(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed the connection
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    _write(port_file, [str(server.sockets[0].getsockname()[1])])
    await stop.wait()
    server.close()
    _write(out, [f"{event_id} {at}" for event_id, at in arrived.items()])


if __name__ == "__main__":
    if sys.argv[1] == "receive":
        asyncio.run(receive(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 0.0))
    else:
        url, token, rate, seconds, keys, out = sys.argv[2:8]
        asyncio.run(publish(url, token, int(rate), int(seconds), int(keys), out))
