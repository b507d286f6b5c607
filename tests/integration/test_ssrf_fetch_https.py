"""The SSRF-safe fetch client against real local HTTPS servers signed by the tests' own CA.

Covers what needs a live peer: certificate-name verification while connecting to a checked IP,
redirects not followed, size caps, timeouts, non-JSON bodies, and DNS rebinding end to end.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from app.net.client import HttpClient
from app.net.errors import FetchRefused
from tests.support.oidc_issuer import HttpReply, TestCA, TlsHttpServer

PUBLIC_V4 = "93.184.216.34"
BIG = 600 * 1024
BIG_BODY = b'{"pad": "' + b"x" * BIG + b'"}'


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


def _routes(server: list[TlsHttpServer]) -> Any:
    def handle(method: str, path: str) -> HttpReply:
        json_type = {"Content-Type": "application/json"}
        if path == "/ok":
            return 200, json_type, b'{"ok": true}'
        if path == "/redirect":
            return 302, {"Location": server[0].url("/target")}, b""
        if path == "/target":
            return 200, json_type, b'{"target": true}'
        if path == "/big":
            return 200, json_type, BIG_BODY
        if path == "/big-stream":
            return 200, json_type, (b"x" * 65536 for _ in range(BIG // 65536 + 2))
        if path == "/slow":
            server[0].stopping.wait(30)  # stalls the reply until the server stops
            return 200, json_type, b"{}"
        bodies = {"/html": b"<html></html>", "/array": b"[1, 2]", "/nan": b'{"a": NaN}', "/latin1": b'{"a": "\xe9"}'}
        if path in bodies:
            return 200, {"Content-Type": "text/plain"}, bodies[path]
        return 500, json_type, b'{"error": "boom"}'

    return handle


@pytest.fixture(scope="module")
def server(ca: TestCA) -> Iterator[TlsHttpServer]:
    holder: list[TlsHttpServer] = []
    cert, key = ca.issue(("localhost", "127.0.0.1", "rebind.example.com"), stem="good")
    holder.append(TlsHttpServer(cert, key, _routes(holder)))
    with holder[0] as running:
        yield running


@pytest.fixture(scope="module")
def wrong_name_server(ca: TestCA) -> Iterator[TlsHttpServer]:
    cert, key = ca.issue(("other.example",), stem="wrong")
    with TlsHttpServer(cert, key, lambda method, path: (200, {}, b"{}")) as running:
        yield running


@pytest.fixture
async def fetcher(ca: TestCA) -> Any:
    async with HttpClient(allow_private_networks=True, ca_file=str(ca.ca_file), read_timeout=2.0) as client:
        yield client


class Reroute:
    """Spy on the real connector: record every dialled address, send chosen ones to a local port."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.to_local: dict[str, int] = {}


@pytest.fixture
def reroute(monkeypatch: pytest.MonkeyPatch) -> Reroute:
    spy = Reroute()
    original = aiohttp.TCPConnector._wrap_create_connection

    async def connect(self: Any, *args: Any, addr_infos: Any, req: Any, **kwargs: Any) -> Any:
        host = addr_infos[0][4][0]
        spy.calls.append(host)
        if host in spy.to_local:
            local = socket.getaddrinfo("127.0.0.1", spy.to_local[host], type=socket.SOCK_STREAM)
            return await original(self, *args, addr_infos=local, req=req, **kwargs)
        if host in ("127.0.0.1", "::1"):
            return await original(self, *args, addr_infos=addr_infos, req=req, **kwargs)
        raise aiohttp.ClientConnectorError(req.connection_key, OSError("spy: no outside network in tests"))

    monkeypatch.setattr(aiohttp.TCPConnector, "_wrap_create_connection", connect)
    return spy


async def test_local_https_server_is_reachable_with_private_networks_allowed_and_the_test_ca(
    server: TlsHttpServer, fetcher: HttpClient
) -> None:
    assert await fetcher.get_json(server.url("/ok")) == {"ok": True}
    assert await fetcher.get_json(server.url("/ok", host="127.0.0.1")) == {"ok": True}


async def test_local_https_server_is_refused_by_default_and_never_hit(server: TlsHttpServer, ca: TestCA) -> None:
    before = server.hit_count("/ok")
    async with HttpClient(ca_file=str(ca.ca_file)) as strict:
        for host in ("localhost", "127.0.0.1"):
            with pytest.raises(FetchRefused) as refused:
                await strict.get_json(server.url("/ok", host=host))
            assert "loopback address refused" in refused.value.reason
    assert server.hit_count("/ok") == before


async def test_certificate_for_another_name_fails_even_on_an_allowed_address(
    wrong_name_server: TlsHttpServer, ca: TestCA
) -> None:
    async with HttpClient(allow_private_networks=True, ca_file=str(ca.ca_file)) as client:
        with pytest.raises(FetchRefused) as refused:
            await client.get_json(wrong_name_server.url("/ok"))
    assert "CERTIFICATE_VERIFY_FAILED" in refused.value.reason
    assert wrong_name_server.hit_count("/ok") == 0


async def test_certificate_from_an_untrusted_ca_fails_with_system_trust_only(server: TlsHttpServer) -> None:
    async with HttpClient(allow_private_networks=True) as client:
        with pytest.raises(FetchRefused) as refused:
            await client.get_json(server.url("/ok"))
    assert "CERTIFICATE_VERIFY_FAILED" in refused.value.reason


async def test_checked_public_address_is_dialled_while_tls_verifies_the_original_name(
    server: TlsHttpServer, ca: TestCA, reroute: Reroute
) -> None:
    asked: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        asked.append(host)
        return [PUBLIC_V4] if len(asked) == 1 else ["127.0.0.1"]

    reroute.to_local[PUBLIC_V4] = server.port  # stands in for the public host
    async with HttpClient(ca_file=str(ca.ca_file), resolver=rebinding) as client:
        assert await client.get_json(f"https://rebind.example.com:{server.port}/ok") == {"ok": True}
    assert asked == ["rebind.example.com"]  # resolved once; the private second answer never used
    assert reroute.calls == [PUBLIC_V4]


async def test_name_not_in_the_certificate_fails_when_its_checked_address_is_dialled(
    server: TlsHttpServer, ca: TestCA, reroute: Reroute
) -> None:
    async def public(host: str, port: int) -> list[str]:
        return [PUBLIC_V4]

    reroute.to_local[PUBLIC_V4] = server.port
    async with HttpClient(ca_file=str(ca.ca_file), resolver=public) as client:
        with pytest.raises(FetchRefused) as refused:
            await client.get_json(f"https://not-in-cert.example.com:{server.port}/ok")
    assert "CERTIFICATE_VERIFY_FAILED" in refused.value.reason
    assert reroute.calls == [PUBLIC_V4]


async def test_redirect_is_not_followed_and_its_target_is_never_hit(server: TlsHttpServer, fetcher: HttpClient) -> None:
    with pytest.raises(FetchRefused) as refused:
        await fetcher.get_json(server.url("/redirect"))
    assert refused.value.reason == "redirect 302 not followed"
    assert server.hit_count("/target") == 0


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/big", f"declared body size {len(BIG_BODY)} exceeds 524288 bytes"),
        ("/big-stream", "body exceeds 524288 bytes"),
    ],
)
async def test_body_over_the_size_cap_is_refused_whether_declared_or_streamed(
    server: TlsHttpServer, fetcher: HttpClient, path: str, reason: str
) -> None:
    with pytest.raises(FetchRefused) as refused:
        await fetcher.get_json(server.url(path))
    assert refused.value.reason == reason


async def test_body_under_a_raised_cap_is_accepted(server: TlsHttpServer, ca: TestCA) -> None:
    async with HttpClient(allow_private_networks=True, ca_file=str(ca.ca_file), max_bytes=2 * BIG) as client:
        assert len((await client.get_json(server.url("/big")))["pad"]) == BIG


async def test_stalled_reply_is_refused_within_the_read_deadline(server: TlsHttpServer, ca: TestCA) -> None:
    started = time.monotonic()
    async with HttpClient(allow_private_networks=True, ca_file=str(ca.ca_file), read_timeout=0.5) as client:
        with pytest.raises(FetchRefused) as refused:
            await client.get_json(server.url("/slow"))
    assert refused.value.reason == "timeout: ReadTimeout"
    assert time.monotonic() - started < 3.0


async def test_peer_that_never_completes_tls_is_refused_within_the_connect_deadline(ca: TestCA) -> None:
    with socket.socket() as mute:  # accepts TCP (backlog) but never speaks TLS
        mute.bind(("127.0.0.1", 0))
        mute.listen(1)
        started = time.monotonic()
        async with HttpClient(allow_private_networks=True, ca_file=str(ca.ca_file), connect_timeout=0.5) as client:
            with pytest.raises(FetchRefused) as refused:
                await client.get_json(f"https://127.0.0.1:{mute.getsockname()[1]}/x")
    assert refused.value.reason.startswith("timeout")
    assert time.monotonic() - started < 3.0


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/html", "not JSON"),
        ("/nan", "not JSON"),
        ("/latin1", "not JSON"),
        ("/array", "JSON list, not an object"),
        ("/missing", "HTTP status 500"),
    ],
)
async def test_non_json_object_or_error_status_is_refused(
    server: TlsHttpServer, fetcher: HttpClient, path: str, reason: str
) -> None:
    with pytest.raises(FetchRefused) as refused:
        await fetcher.get_json(server.url(path))
    assert reason in refused.value.reason
