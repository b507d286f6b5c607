"""An idle keep-alive connection outlives the clients' own idle timeout (outside attack, issue 30).

A server that closes an idle connection at the same moment a client reuses it leaves the client
with a request sent and no answer (httpx: ReadError), and for a publish the client cannot tell
whether it was accepted. Clients close their idle connections after a few seconds (httpx and
aiohttp: 5 s, Go's net/http: 90 s, browsers: 60-300 s); the API keeps an idle connection longer
than httpx's and aiohttp's, so they close first and never race it."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import pytest

from cli.api import KEEP_ALIVE_SECONDS
from tests.support.stack import Stack

pytestmark = [pytest.mark.kafka]

CLIENTS_IDLE_EXPIRY_S = 5.0  # httpx's and aiohttp's default keep-alive expiry


def _get(sock: socket.socket, host: str) -> bytes:
    """One GET on ``sock``: the whole answer, head and body (by its Content-Length), so that the next
    request's answer starts clean; what came before the server closed the connection, if it did."""
    sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    answer = b""
    while True:
        head, ended, body = answer.partition(b"\r\n\r\n")
        if ended:
            lines = head.lower().split(b"\r\n")
            length = next((int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length")), 0)
            if len(body) >= length:
                return answer
        chunk = sock.recv(4096)
        if not chunk:
            return answer  # closed by the server
        answer += chunk


def test_an_idle_connection_is_kept_longer_than_clients_keep_theirs(stack_factory: Callable[..., Stack]) -> None:
    assert KEEP_ALIVE_SECONDS > CLIENTS_IDLE_EXPIRY_S + 5
    stack = stack_factory()
    stack.bootstrap()
    stack.start_api()
    host = stack.base_url.removeprefix("http://")
    address, port = host.rsplit(":", 1)
    with socket.create_connection((address, int(port)), timeout=10) as sock:
        assert _get(sock, host).startswith(b"HTTP/1.1 200")
        time.sleep(CLIENTS_IDLE_EXPIRY_S + 1)  # the idle time under test: longer than the clients keep theirs
        assert _get(sock, host).startswith(b"HTTP/1.1 200"), "the server closed an idle connection a client may reuse"
