"""Which addresses an outbound request may connect to, checked on the addresses actually used.

Under the public-only policy no connection goes to loopback, private, link-local, CGNAT,
multicast, unspecified, reserved or documentation ranges, IPv6 ULA / site-local, nor to IPv6
forms that embed such an IPv4 address (mapped, compatible, NAT64, 6to4). ``allow_private_networks``
lifts that, except for link-local and the clouds' metadata addresses (:func:`never_allowed`);
``loopback_ports`` (``TOCSIN_LOOPBACK_TARGETS``) opens loopback on the listed ports only.

:class:`CheckedResolver` is the connector's resolver: a name is resolved once per connection,
every answer is checked and the connection goes to exactly those checked addresses (TLS still
verifies the certificate, and sends SNI, for the original name), so a resolver that answers
differently on a second query (DNS rebinding) is never asked twice for one connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable

from aiohttp.abc import AbstractResolver, ResolveResult

from app.net.errors import FetchRefused, TargetRefused

Resolver = Callable[[str, int], Awaitable[list[str]]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network
_V4_DENY: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("0.0.0.0/8"), "unspecified / this-network"),
    (_V4("10.0.0.0/8"), "private"),
    (_V4("100.64.0.0/10"), "CGNAT shared"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("169.254.0.0/16"), "link-local"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.0.0.0/24"), "IETF protocol assignments"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("192.88.99.0/24"), "6to4 relay anycast"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("198.18.0.0/15"), "benchmarking"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("240.0.0.0/4"), "reserved / broadcast"),
)
_V6_DENY: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("::/128"), "unspecified"),
    (_V6("::1/128"), "loopback"),
    (_V6("64:ff9b:1::/48"), "local-use NAT64"),
    (_V6("100::/64"), "discard-only"),
    (_V6("2001::/23"), "IETF protocol assignments (incl. Teredo)"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),
    (_V6("5f00::/16"), "segment routing"),
    (_V6("fc00::/7"), "unique local (ULA)"),
    (_V6("fe80::/10"), "link-local"),
    (_V6("fec0::/10"), "site-local"),
    (_V6("ff00::/8"), "multicast"),
)
_V6_GLOBAL_UNICAST = _V6("2000::/3")
_V6_EMBEDDING: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("::ffff:0:0/96"), "IPv4-mapped"),
    (_V6("::ffff:0:0:0/96"), "IPv4-translated"),
    (_V6("64:ff9b::/96"), "NAT64"),
    (_V6("::/96"), "IPv4-compatible"),
)
_NUMERIC_LABEL = re.compile(r"^(?:[0-9]+|0[xX][0-9a-fA-F]*)$")


# Refused even where private networks are allowed: link-local addresses (where every cloud's
# instance metadata answers, 169.254.169.254 among them) and the providers' other metadata addresses.
_ALWAYS_DENY: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = (
    (_V4("169.254.0.0/16"), "link-local (cloud metadata)"),
    (_V4("100.100.100.200/32"), "cloud metadata"),
    (_V6("fe80::/10"), "link-local"),
    (_V6("fd00:ec2::254/128"), "cloud metadata"),
)


def never_allowed(ip: IPAddress) -> str | None:
    """Why ``ip`` is refused whatever the settings (metadata and link-local), or ``None``."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            return never_allowed(embedded[1])
    for net, label in _ALWAYS_DENY:
        if ip.version == net.version and ip in net:
            return label
    return None


def forbidden_reason(ip: IPAddress) -> str | None:
    """Why connecting to ``ip`` is refused under the public-only policy, or ``None`` if allowed."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "scoped IPv6 address"
        for net, label in _V6_DENY[:2]:
            if ip in net:
                return label
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            kind, v4 = embedded
            inner = forbidden_reason(v4)
            return f"{kind} {v4} ({inner})" if inner else None
        for net, label in _V6_DENY:
            if ip in net:
                return label
        return None if ip in _V6_GLOBAL_UNICAST else "reserved IPv6"
    for net4, label in _V4_DENY:
        if ip in net4:
            return label
    return None if ip.is_global else "non-global IPv4"


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address a transition form (mapped, compatible, NAT64, 6to4) really reaches."""
    for net, kind in _V6_EMBEDDING:
        if ip in net:
            return kind, ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    return None


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address ``host`` denotes literally, as the OS resolver would read it; ``None`` for a name.

    Accepts IPv6 (optionally bracketed, ``%25``-escaped zone) and every IPv4 form ``inet_aton``
    accepts: 1-4 parts, decimal / octal (leading 0) / hex (0x), e.g. ``2130706433``, ``0177.1``,
    ``127.1``, with one trailing dot. A host whose last label is numeric but does not parse is
    refused rather than handed to DNS.
    """
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text.replace("%25", "%"))
        except ValueError as exc:
            raise TargetRefused(f"malformed IPv6 literal {host!r}") from exc
    if text.endswith("."):
        text = text[:-1]
    labels = text.split(".")
    if not labels or not _NUMERIC_LABEL.match(labels[-1]):
        return None
    value = _inet_aton(labels)
    if value is None:
        raise TargetRefused(f"malformed IPv4 literal {host!r}")
    return ipaddress.IPv4Address(value)


def _inet_aton(labels: list[str]) -> int | None:
    """``inet_aton`` semantics for already split labels; ``None`` if they are not a valid address."""
    if len(labels) > 4:
        return None
    parts: list[int] = []
    for label in labels:
        if not _NUMERIC_LABEL.match(label):
            return None
        if label[:2].lower() == "0x":
            if len(label) == 2:
                return None
            parts.append(int(label[2:], 16))
        elif len(label) > 1 and label.startswith("0"):
            if any(c not in "01234567" for c in label):
                return None
            parts.append(int(label, 8))
        else:
            parts.append(int(label))
    *leading, last = parts
    if any(p > 255 for p in leading) or last >= 256 ** (5 - len(parts)):
        return None
    value = last
    for index, part in enumerate(leading):
        value |= part << (8 * (3 - index))
    return value


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve with the OS resolver (``getaddrinfo``), keeping the answer order, without duplicates."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[str, None] = {}
    for info in infos:
        seen.setdefault(str(info[4][0]), None)
    return list(seen)


class CheckedResolver(AbstractResolver):
    """Resolves once, checks every address, then hands the connector exactly the checked ones.

    ``exempt`` names the one ``(host, port)`` (the configured proxy) that is checked against
    :func:`never_allowed` only: an egress proxy usually sits on a private network.
    """

    def __init__(
        self,
        *,
        allow_private_networks: bool,
        resolver: Resolver,
        loopback_ports: frozenset[int] = frozenset(),
        exempt: tuple[str, int] | None = None,
        timeout: float | None = None,
    ) -> None:
        self._allow_private = allow_private_networks
        self._loopback_ports = loopback_ports
        self._resolver = resolver
        self._exempt = exempt
        self._timeout = timeout

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """The checked addresses of ``host``, in the resolver's order; refuses if any one is forbidden."""
        addresses = await self.checked_addresses(host, port, self._timeout)
        return [
            ResolveResult(
                hostname=host,
                host=str(ip),
                port=port,
                family=socket.AF_INET6 if ip.version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for ip in addresses
        ]

    async def close(self) -> None:
        """Nothing to release: the resolver function owns no resources."""

    def refusal(self, host: str, ip: IPAddress, port: int) -> str | None:
        """Why connecting to ``ip`` (standing for ``host``) on ``port`` is refused, or ``None``."""
        why = never_allowed(ip)
        if why is not None or self._allow_private or (host.lower(), port) == self._exempt:
            return why
        if ip.is_loopback and port in self._loopback_ports:
            return None
        return forbidden_reason(ip)

    async def checked_addresses(self, host: str, port: int, limit: float | None) -> list[IPAddress]:
        """Every address ``host`` stands for, each checked; refuses if any one is forbidden."""
        literal = parse_ip_literal(host)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            addresses = await self._resolve(host, port, limit)
        for ip in addresses:
            why = self.refusal(host, ip, port)
            if why is not None:
                raise TargetRefused(f"{host} -> {ip}: {why} address refused")
        return addresses

    async def _resolve(self, host: str, port: int, limit: float | None) -> list[IPAddress]:
        """Ask the resolver once; its answers must all be IP addresses."""
        try:
            answers = await asyncio.wait_for(self._resolver(host, port), limit)
        except TimeoutError as exc:
            raise FetchRefused(f"resolving {host} timed out") from exc
        except OSError as exc:
            raise FetchRefused(f"resolving {host} failed: {exc}") from exc
        if not answers:
            raise FetchRefused(f"{host} resolved to no address")
        try:
            return [ipaddress.ip_address(answer) for answer in answers]
        except ValueError as exc:
            raise FetchRefused(f"resolver answered a non-address for {host}: {answers!r}") from exc
