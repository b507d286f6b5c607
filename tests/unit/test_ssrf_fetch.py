"""SSRF rules of the one outbound fetch client, without any HTTP server.

Every connection attempt goes through ``aiohttp.TCPConnector._wrap_create_connection``; a spy
replaces it, records the address and refuses, so no test here touches the network. A real listening socket
on 127.0.0.1 additionally proves that nothing reached the loopback interface.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from app.errors import TocsinError
from app.net.client import HttpClient
from app.net.errors import UNIFORM_MESSAGE, FetchRefused, TargetRefused
from app.net.ssrf import forbidden_reason, parse_ip_literal

PUBLIC_V4 = "93.184.216.34"


class ConnectError(OSError):
    """The spy's refusal, as the connector sees a refused connection."""


class ConnectSpy:
    """Records every TCP connect the fetcher attempts and refuses it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> ConnectSpy:
    recorder = ConnectSpy()

    async def connect(self: Any, *args: Any, addr_infos: Any, req: Any, **kwargs: Any) -> Any:
        recorder.calls.append(tuple(addr_infos[0][4][:2]))
        raise aiohttp.ClientConnectorError(req.connection_key, ConnectError("spy: unit tests never connect"))

    monkeypatch.setattr(aiohttp.TCPConnector, "_wrap_create_connection", connect)
    return recorder


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback socket that would see any connection that slipped past the spy."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def assert_never_accepted(sock: socket.socket) -> None:
    with pytest.raises(BlockingIOError):
        conn, _ = sock.accept()
        conn.close()


class MapResolver:
    """Answers from a table, counting the questions; a list of answers is served in turn."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        answers = self.table[host]
        return answers.pop(0) if len(answers) > 1 else answers[0]


# (class, address) - refused as an IP literal in the URL and as a name resolving to it
FORBIDDEN = [
    ("loopback", "127.0.0.1"),
    ("loopback-range", "127.255.255.254"),
    ("private-10", "10.0.0.1"),
    ("private-172.16", "172.16.0.1"),
    ("private-172.31", "172.31.255.255"),
    ("private-192.168", "192.168.1.1"),
    ("link-local-metadata", "169.254.169.254"),
    ("cgnat-low", "100.64.0.1"),
    ("cgnat-high", "100.127.255.254"),
    ("multicast", "224.0.0.1"),
    ("multicast-ssdp", "239.255.255.250"),
    ("unspecified", "0.0.0.0"),
    ("this-network", "0.1.2.3"),
    ("broadcast", "255.255.255.255"),
    ("reserved-class-e", "240.0.0.1"),
    ("benchmarking", "198.18.0.1"),
    ("documentation-v4", "192.0.2.1"),
    ("v6-loopback", "::1"),
    ("v6-unspecified", "::"),
    ("v6-link-local", "fe80::1"),
    ("v6-ula-fc", "fc00::1"),
    ("v6-ula-fd", "fd12:3456:789a::1"),
    ("v6-site-local", "fec0::1"),
    ("v6-multicast", "ff02::1"),
    ("v6-documentation", "2001:db8::1"),
    ("v6-teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2"),
    ("v6-reserved", "4000::1"),
    ("mapped-loopback", "::ffff:127.0.0.1"),
    ("mapped-private", "::ffff:10.0.0.1"),
    ("mapped-metadata", "::ffff:169.254.169.254"),
    ("compatible-loopback", "::127.0.0.1"),
    ("translated-private", "::ffff:0:192.168.0.1"),
    ("nat64-private", "64:ff9b::10.0.0.1"),
    ("nat64-loopback", "64:ff9b::127.0.0.1"),
    ("nat64-local-use", "64:ff9b:1::1"),
    ("6to4-private", "2002:c0a8:101::1"),
    ("6to4-loopback", "2002:7f00:1::"),
]
# odd literal spellings the OS resolver accepts, all of forbidden addresses
ODD_LITERALS = [
    "2130706433",
    "0177.0.0.1",
    "127.1",
    "0x7f.0.0.1",
    "0x7f000001",
    "017700000001",
    "127.0.0.1.",
    "10.1",
    "0",
    "169.254.43518",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:ffff:127.0.0.1]",
    "[fe80::1%25eth0]",
]
# public addresses, including transition forms whose embedded IPv4 is public
ALLOWED = [
    PUBLIC_V4,
    "8.8.8.8",
    "2606:2800:220:1::1",
    "::ffff:93.184.216.34",
    "64:ff9b::5db8:d822",
    "2002:5db8:d822::1",
]


def _url_host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


@pytest.mark.parametrize(("kind", "address"), FORBIDDEN, ids=[k for k, _ in FORBIDDEN])
async def test_forbidden_ip_literal_is_refused_without_connecting(
    kind: str, address: str, spy: ConnectSpy, listener: socket.socket
) -> None:
    port = listener.getsockname()[1]
    async with HttpClient(resolver=MapResolver({})) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get_json(f"https://{_url_host(address)}:{port}/.well-known/openid-configuration")
    assert "address refused" in refused.value.reason
    assert spy.calls == []
    assert_never_accepted(listener)


@pytest.mark.parametrize(("kind", "address"), FORBIDDEN, ids=[k for k, _ in FORBIDDEN])
async def test_name_resolving_to_forbidden_address_is_refused_without_connecting(
    kind: str, address: str, spy: ConnectSpy, listener: socket.socket
) -> None:
    port = listener.getsockname()[1]
    resolver = MapResolver({"idp.example.com": [[address]]})
    async with HttpClient(resolver=resolver) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get_json(f"https://idp.example.com:{port}/jwks")
    assert refused.value.reason.startswith("idp.example.com -> ")
    assert resolver.asked == ["idp.example.com"]
    assert spy.calls == []
    assert_never_accepted(listener)


@pytest.mark.parametrize("host", ODD_LITERALS)
async def test_odd_ip_literal_spellings_are_refused_without_resolving_or_connecting(
    host: str, spy: ConnectSpy, listener: socket.socket
) -> None:
    resolver = MapResolver({})
    async with HttpClient(resolver=resolver) as fetcher:
        with pytest.raises(FetchRefused):
            await fetcher.get_json(f"https://{host}:{listener.getsockname()[1]}/x")
    assert resolver.asked == []
    assert spy.calls == []
    assert_never_accepted(listener)


@pytest.mark.parametrize("address", ALLOWED)
async def test_public_address_passes_the_check_and_is_the_one_connected_to(address: str, spy: ConnectSpy) -> None:
    resolver = MapResolver({"idp.example.com": [[address]]})
    async with HttpClient(resolver=resolver) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get_json("https://idp.example.com/jwks")
    assert refused.value.reason.startswith("connection failed: ConnectError")  # the spy's refusal
    assert spy.calls == [(str(ipaddress.ip_address(address)), 443)]


async def test_rebinding_resolver_is_asked_once_per_connection_and_only_the_checked_address_is_dialled(
    spy: ConnectSpy,
) -> None:
    resolver = MapResolver({"rebind.example.com": [[PUBLIC_V4], ["127.0.0.1"]]})
    async with HttpClient(resolver=resolver) as fetcher:
        with pytest.raises(FetchRefused) as first:
            await fetcher.get_json("https://rebind.example.com/jwks")
        assert first.value.reason.startswith("connection failed")
        assert spy.calls == [(PUBLIC_V4, 443)]  # the checked answer, not a second lookup
        with pytest.raises(FetchRefused) as second:
            await fetcher.get_json("https://rebind.example.com/jwks")
    assert "loopback address refused" in second.value.reason
    assert resolver.asked == ["rebind.example.com", "rebind.example.com"]
    assert spy.calls == [(PUBLIC_V4, 443)]


async def test_any_forbidden_answer_among_several_refuses_the_name(spy: ConnectSpy) -> None:
    resolver = MapResolver({"mixed.example.com": [[PUBLIC_V4, "10.0.0.7"]]})
    async with HttpClient(resolver=resolver) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get_json("https://mixed.example.com/jwks")
    assert "10.0.0.7" in refused.value.reason
    assert spy.calls == []


@pytest.mark.parametrize(
    ("answers", "reason"),
    [([], "resolved to no address"), (["127.1"], "non-address"), (["not-an-ip"], "non-address")],
)
async def test_resolver_answers_that_are_not_addresses_are_refused(
    answers: list[str], reason: str, spy: ConnectSpy
) -> None:
    async with HttpClient(resolver=MapResolver({"odd.example.com": [answers]})) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get_json("https://odd.example.com/x")
    assert reason in refused.value.reason
    assert spy.calls == []


async def test_resolver_failure_is_refused(spy: ConnectSpy) -> None:
    async def failing(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    async with HttpClient(resolver=failing) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get_json("https://nowhere.example.com/x")
    assert refused.value.reason.startswith("resolving nowhere.example.com failed")


async def test_localhost_through_the_system_resolver_is_refused(spy: ConnectSpy, listener: socket.socket) -> None:
    async with HttpClient() as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get_json(f"https://localhost:{listener.getsockname()[1]}/x")
    assert "loopback" in refused.value.reason
    assert spy.calls == []
    assert_never_accepted(listener)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://idp.example.com/x", "https only"),
        ("HTTP://idp.example.com/x", "https only"),
        ("ftp://idp.example.com/x", "https only"),
        ("file:///etc/passwd", "https only"),
        ("gopher://idp.example.com:70/x", "https only"),
        ("https://user:pw@idp.example.com/x", "credentials"),
        ("https://user@idp.example.com/x", "credentials"),
        ("https:///x", "no host"),
        ("/relative/path", "https only"),
        ("https://idp.example.com:0/x", "out of range"),
        ("https://idp.example.com:99999/x", "out of range"),
        ("https://idp.example.com:8o/x", "malformed URL"),
        ("https://idp.example.com/" + "a" * 3000, "too long"),
    ],
)
async def test_url_rules_refuse_before_any_lookup(url: str, reason: str, spy: ConnectSpy) -> None:
    resolver = MapResolver({})
    async with HttpClient(resolver=resolver) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get_json(url)
    assert reason in refused.value.reason
    assert resolver.asked == [] and spy.calls == []


async def test_http_url_to_a_listening_loopback_port_is_refused_even_with_private_networks_allowed(
    spy: ConnectSpy, listener: socket.socket
) -> None:
    async with HttpClient(allow_private_networks=True) as fetcher:
        with pytest.raises(FetchRefused):
            await fetcher.get_json(f"http://127.0.0.1:{listener.getsockname()[1]}/x")
    assert spy.calls == []
    assert_never_accepted(listener)


async def test_every_failure_has_the_same_message_and_keeps_its_reason(spy: ConnectSpy) -> None:
    reasons = set()
    async with HttpClient(resolver=MapResolver({"idp.example.com": [[PUBLIC_V4]]})) as fetcher:
        for url in ("http://idp.example.com/", "https://10.0.0.1/", "https://idp.example.com/"):
            with pytest.raises(FetchRefused) as refused:
                await fetcher.get_json(url)
            assert str(refused.value) == UNIFORM_MESSAGE
            assert refused.value.details == {}  # nothing internal reaches an API body
            reasons.add(refused.value.reason)
    assert len(reasons) == 3
    assert isinstance(refused.value, TocsinError)
    assert (FetchRefused.http_status, FetchRefused.code) == (422, "VAL-001")


@pytest.mark.parametrize(
    "host", ["2130706433", "0177.0.0.1", "127.1", "0x7f.0.0.1", "0x7f000001", "10.1", "0", "1.2.3.04", "8.8.8.8"]
)
def test_ipv4_literal_reading_matches_the_os_inet_aton(host: str) -> None:
    assert parse_ip_literal(host) == ipaddress.IPv4Address(socket.inet_aton(host))


@pytest.mark.parametrize("host", ["08.1.1.1", "256.1", "1.16777216", "1.2.3.4.5", "0x", "1..2", "[1::2::3]"])
def test_numeric_hosts_the_os_would_not_read_as_addresses_are_refused_not_resolved(host: str) -> None:
    # refused for good (a delivery to it is REFUSED, not retried: no retry makes it an address);
    # found from outside: https://%31%32%37.0.0.1/ was retried for a day
    with pytest.raises(TargetRefused):
        parse_ip_literal(host)


@pytest.mark.parametrize("host", ["example.com", "idp.example.com.", "1.example", "xn--bcher-kva.de"])
def test_names_are_not_read_as_literals(host: str) -> None:
    assert parse_ip_literal(host) is None


def test_embedded_ipv4_is_judged_for_transition_forms() -> None:
    assert forbidden_reason(ipaddress.ip_address("::ffff:8.8.8.8")) is None
    assert "IPv4-mapped 10.0.0.1" in (forbidden_reason(ipaddress.ip_address("::ffff:10.0.0.1")) or "")
    assert "NAT64 192.168.0.1" in (forbidden_reason(ipaddress.ip_address("64:ff9b::c0a8:1")) or "")
    assert "6to4 127.0.0.1" in (forbidden_reason(ipaddress.ip_address("2002:7f00:1::")) or "")


async def test_a_refused_url_is_refused_every_time_and_never_remembered(spy: ConnectSpy) -> None:
    async with HttpClient(resolver=MapResolver({})) as fetcher:
        for _ in range(3):
            with pytest.raises(FetchRefused) as refused:
                await fetcher.post("https://127.0.0.1/hook", b"{}", {})
            assert "address refused" in refused.value.reason
        assert len(fetcher.targets) == 0
    assert spy.calls == []


async def test_a_remembered_url_still_has_its_name_looked_up_and_checked_at_each_connection(spy: ConnectSpy) -> None:
    resolver = MapResolver({"hooks.example.com": [[PUBLIC_V4], ["10.0.0.1"]]})
    async with HttpClient(resolver=resolver) as fetcher:
        with pytest.raises(FetchRefused) as first:
            await fetcher.post("https://hooks.example.com/in", b"{}", {})
        assert first.value.reason.startswith("connection failed")
        assert list(fetcher.targets) == [("https://hooks.example.com/in", False)]  # parsed and checked once
        with pytest.raises(FetchRefused) as second:  # the URL is remembered, the name's new answer is not
            await fetcher.post("https://hooks.example.com/in", b"{}", {})
    assert "private address refused" in second.value.reason
    assert resolver.asked == ["hooks.example.com", "hooks.example.com"]
    assert spy.calls == [(PUBLIC_V4, 443)]
