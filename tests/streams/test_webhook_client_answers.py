"""Answers the hand-written webhook poster misread (issue 17, item 5): interim ``1xx`` answers
before the final one, and chunked trailers left on a pooled connection for the next delivery to
read as its own answer. Plus the forward proxy (``TOCSIN_HTTP_PROXY``). Real local servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from pydantic import ValidationError

from app.net.client import HttpClient
from app.net.errors import FetchRefused, TargetRefused
from app.settings import Settings
from tests.support.raw_http import loopback_server, read_request

REPLIES = {
    "/interim": (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    ),
    "/trailers": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Digest, X-Count\r\n\r\n"
        b"5\r\nhello\r\n0\r\nX-Digest: sha-256=abc\r\nX-Count: 1\r\n\r\n"
    ),
    "/busy": b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n",
    "/ok": b"HTTP/1.1 204 No Content\r\n\r\n",
}


@dataclass
class Server:
    port: int = 0
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)


async def _serve(state: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    state.connections += 1
    while True:
        head = await read_request(reader)
        state.requests.append(head.split(b"\r\n", 1)[0])
        method, target = head.split(b" ")[:2]
        if method == b"CONNECT":  # as a forward proxy: refuse every tunnel
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            continue
        path = target.decode().rpartition("127.0.0.1")[2].partition("/")[1:]  # absolute form via a proxy
        writer.write(REPLIES["".join(path) or target.decode()])
        await writer.drain()


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    state = Server()
    async with loopback_server(lambda r, w: _serve(state, r, w)) as state.port:
        yield state


@pytest.fixture
async def client() -> AsyncIterator[HttpClient]:
    async with HttpClient(allow_private_networks=True, connect_timeout=2, read_timeout=2) as http:
        yield http


async def test_interim_1xx_answers_are_skipped_and_the_final_status_is_returned(
    server: Server, client: HttpClient
) -> None:
    """Before: the poster returned 100 as the delivery's answer and left the rest unread."""
    first = await client.post(f"http://127.0.0.1:{server.port}/interim", b"{}", {})
    assert first.status == 200
    second = await client.post(f"http://127.0.0.1:{server.port}/ok", b"{}", {})
    assert second.status == 204
    assert server.connections == 1, "the connection was clean for the next delivery"


async def test_chunked_trailers_are_consumed_before_the_connection_carries_the_next_delivery(
    server: Server, client: HttpClient
) -> None:
    """Before: the trailers stayed on the pooled connection and the next delivery read them as
    its own answer (and failed, or took the previous delivery's answer)."""
    assert (await client.post(f"http://127.0.0.1:{server.port}/trailers", b"{}", {})).status == 200
    second = await client.post(f"http://127.0.0.1:{server.port}/busy", b"{}", {})
    assert (second.status, second.headers["retry-after"]) == (429, "7")
    assert (await client.post(f"http://127.0.0.1:{server.port}/trailers", b"{}", {})).status == 200
    assert (await client.post(f"http://127.0.0.1:{server.port}/ok", b"{}", {})).status == 204
    assert server.connections == 1, "every delivery went over the same pooled connection"


async def test_through_the_proxy_the_name_is_resolved_by_the_proxy_and_literals_are_still_refused(
    server: Server,
) -> None:
    asked: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    proxy = f"http://127.0.0.1:{server.port}"
    async with HttpClient(proxy=proxy, resolver=resolver, connect_timeout=2, read_timeout=2) as client:
        with pytest.raises(FetchRefused) as refused:  # the test proxy refuses every tunnel
            await client.post("https://hooks.example.com/hook", b"{}", {})
        assert not isinstance(refused.value, TargetRefused)
        with pytest.raises(TargetRefused):
            await client.post("https://10.0.0.1/hook", b"{}", {})
        with pytest.raises(TargetRefused):
            await client.get_json("https://169.254.169.254/latest/meta-data")
    assert server.requests == [b"CONNECT hooks.example.com:443 HTTP/1.1"]
    assert asked == [], "the proxy (a literal) is not resolved, the target's name is the proxy's to resolve"


def test_the_proxy_must_be_plain_http_and_never_a_metadata_address() -> None:
    with pytest.raises(TargetRefused):
        HttpClient(proxy="https://proxy.example.com:3128")
    with pytest.raises(TargetRefused):
        HttpClient(proxy="socks5://proxy.example.com:1080")
    with pytest.raises(TargetRefused):
        HttpClient(proxy="http://169.254.169.254:3128")
    HttpClient(proxy="http://10.0.0.8:3128")  # an egress proxy on a private network is fine


def test_the_proxy_setting_takes_an_http_url_only() -> None:
    assert Settings().outbound.http_proxy is None, "direct unless set; HTTPS_PROXY and friends are never read"
    set_one = Settings(http_proxy="http://egress.internal:3128")
    assert set_one.outbound.http_proxy == "http://egress.internal:3128"
    for bad in ("egress.internal:3128", "https://egress.internal:3128", "socks5://egress.internal:1080", "http://"):
        with pytest.raises(ValidationError, match="TOCSIN_HTTP_PROXY"):
            Settings(http_proxy=bad)
