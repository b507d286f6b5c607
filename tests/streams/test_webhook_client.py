"""HttpClient as the webhook client (post): keep-alive reuse, responses with and without headers, chunked
and close-delimited bodies, a redirect returned (never followed), a connection the server closed
while idle resent once, oversized bodies and timeouts, and TLS verified against a test CA."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.net.client import HttpClient
from app.net.errors import FetchRefused, TargetRefused
from tests.support.raw_http import loopback_server, read_request
from tests.support.tls_server import TestCA

REPLIES = {
    "/ok": b"HTTP/1.1 204 No Content\r\n\r\n",
    "/json": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    "/chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n",
    "/close": b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbye",
    "/redirect": b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /ok\r\nContent-Length: 0\r\n\r\n",
    "/busy": b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n",
    "/big": b"HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n" + b"x" * 1000,
    "/garbage": b"SMTP ready\r\n\r\n",
}


@dataclass
class Server:
    port: int = 0
    connections: int = 0
    paths: list[str] = field(default_factory=list)
    drop_idle: bool = False  # close each connection right after its response (without saying so)


async def _serve(state: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    state.connections += 1
    while True:
        path = (await read_request(reader)).split(b" ")[1].decode()
        state.paths.append(path)
        if path == "/slow":
            await asyncio.sleep(30)
        writer.write(REPLIES[path])
        await writer.drain()
        if path in ("/close", "/big") or state.drop_idle:
            break


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    state = Server()
    async with loopback_server(lambda r, w: _serve(state, r, w)) as state.port:
        yield state


@pytest.fixture
async def poster() -> AsyncIterator[HttpClient]:
    client = HttpClient(allow_private_networks=True, connect_timeout=2, read_timeout=1, max_bytes=64 * 1024)
    try:
        yield client
    finally:
        await client.aclose()


async def test_keep_alive_reuses_one_connection(server: Server, poster: HttpClient) -> None:
    for path in ("/ok", "/json", "/chunked", "/ok"):
        result = await poster.post(f"http://127.0.0.1:{server.port}{path}", b"{}", {"x-test": "1"})
        assert result.status in (200, 204)
    assert server.connections == 1 and server.paths == ["/ok", "/json", "/chunked", "/ok"]


async def test_a_close_delimited_response_is_not_reused(server: Server, poster: HttpClient) -> None:
    assert (await poster.post(f"http://127.0.0.1:{server.port}/close", b"{}", {})).status == 200
    assert (await poster.post(f"http://127.0.0.1:{server.port}/ok", b"{}", {})).status == 204
    assert server.connections == 2


async def test_a_connection_closed_while_idle_is_resent_once(server: Server, poster: HttpClient) -> None:
    server.drop_idle = True
    for _ in range(3):
        assert (await poster.post(f"http://127.0.0.1:{server.port}/ok", b"{}", {})).status == 204
    assert server.paths == ["/ok"] * 3, "each request reached the server exactly once"


async def test_redirects_and_retry_after_are_returned_as_they_are(server: Server, poster: HttpClient) -> None:
    redirect = await poster.post(f"http://127.0.0.1:{server.port}/redirect", b"{}", {})
    assert redirect.status == 307 and redirect.headers["location"] == "/ok"
    assert server.paths == ["/redirect"], "the redirect is not followed"
    busy = await poster.post(f"http://127.0.0.1:{server.port}/busy", b"{}", {})
    assert busy.status == 429 and busy.headers["retry-after"] == "7"


async def test_an_oversized_body_is_not_read_and_the_connection_dropped(server: Server, poster: HttpClient) -> None:
    assert (await poster.post(f"http://127.0.0.1:{server.port}/big", b"{}", {})).status == 200
    assert (await poster.post(f"http://127.0.0.1:{server.port}/ok", b"{}", {})).status == 204
    assert server.connections == 2


@pytest.mark.parametrize("path", ["/slow", "/garbage"])
async def test_timeouts_and_non_http_answers_are_failures_not_refusals(
    server: Server, poster: HttpClient, path: str
) -> None:
    with pytest.raises(FetchRefused) as caught:
        await poster.post(f"http://127.0.0.1:{server.port}{path}", b"{}", {})
    assert not isinstance(caught.value, TargetRefused), "a retry may succeed"


async def test_plain_http_needs_the_private_network_setting(server: Server) -> None:
    client = HttpClient(allow_private_networks=False)
    with pytest.raises(TargetRefused):
        await client.post(f"http://127.0.0.1:{server.port}/ok", b"{}", {})
    with pytest.raises(TargetRefused):  # and loopback is refused over https too
        await client.post(f"https://127.0.0.1:{server.port}/ok", b"{}", {})
    assert server.connections == 0


async def _tls_server(tmp_path: Path, names: tuple[str, ...]) -> tuple[asyncio.Server, Server, Path]:
    ca = TestCA(tmp_path)
    cert, key = ca.issue(names)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    state = Server()
    srv = await asyncio.start_server(lambda r, w: _serve(state, r, w), "127.0.0.1", 0, ssl=context)
    state.port = srv.sockets[0].getsockname()[1]
    return srv, state, Path(ca.ca_file)


async def test_https_is_verified_against_the_trusted_ca(tmp_path: Path) -> None:
    srv, state, ca_file = await _tls_server(tmp_path, ("localhost",))
    client = HttpClient(allow_private_networks=True, ca_file=str(ca_file))
    try:
        assert (await client.post(f"https://localhost:{state.port}/ok", b"{}", {})).status == 204
        assert (await client.post(f"https://localhost:{state.port}/ok", b"{}", {})).status == 204
        assert state.connections == 1
        with pytest.raises(FetchRefused):  # the certificate names localhost, not 127.0.0.1
            await client.post(f"https://127.0.0.1:{state.port}/ok", b"{}", {})
    finally:
        await client.aclose()
        srv.close()
    untrusted = HttpClient(allow_private_networks=True)  # the system CAs only
    srv, state, _ = await _tls_server(tmp_path / "other", ("localhost",))
    try:
        with pytest.raises(FetchRefused):
            await untrusted.post(f"https://localhost:{state.port}/ok", b"{}", {})
    finally:
        await untrusted.aclose()
        srv.close()
