"""The one SSRF-safe outbound HTTPS client, used for OIDC discovery and JWKS documents.

Rules (each failure is a :class:`FetchRefused` with one uniform message; the precise cause is
kept in ``reason`` for logs and admins):

- ``https`` only, no credentials in the URL, a host is required;
- redirects are never followed (a ``3xx`` is a failure), only ``200`` is accepted;
- connect and read timeouts, plus an overall deadline of both summed;
- the body is streamed and reading stops past ``max_bytes``; it must be a UTF-8 JSON object;
- no connection to loopback, private, link-local, CGNAT, multicast, unspecified, reserved or
  documentation ranges, IPv6 ULA / site-local, nor to IPv6 forms that embed such an IPv4
  address (mapped, compatible, NAT64, 6to4), unless ``allow_private_networks``.

The address check happens inside the network backend, on the address actually connected to:
the host is resolved once, every answer is checked, and the socket is opened to that exact
checked IP while TLS still verifies the certificate (and sends SNI) for the original name.
A resolver that answers differently on a second query (DNS rebinding) is therefore never
asked twice for one connection. No proxy settings from the environment are honoured.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import httpcore
import httpx

from app.domain.workflow import loopback_http_allowed
from app.errors import TocsinError

Resolver = Callable[[str, int], Awaitable[list[str]]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

UNIFORM_MESSAGE = "the document could not be fetched: the URL must be a reachable public https endpoint serving JSON"
MAX_URL_LENGTH = 2048

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
_HEADERS = [(b"Accept", b"application/json"), (b"Accept-Encoding", b"identity"), (b"User-Agent", b"tocsin-fetch/1")]
_NUMERIC_LABEL = re.compile(r"^(?:[0-9]+|0[xX][0-9a-fA-F]*)$")


class FetchRefused(TocsinError):
    """An outbound fetch was refused or failed. ``str()`` is uniform; ``reason`` says why."""

    http_status = 422
    code = "VAL-001"

    def __init__(self, reason: str) -> None:
        super().__init__(UNIFORM_MESSAGE)
        self.reason = reason

    def __repr__(self) -> str:
        return f"FetchRefused(reason={self.reason!r})"


class TargetRefused(FetchRefused):
    """The target itself is refused (scheme, credentials, malformed URL, a forbidden address):
    no retry can change that, unlike a timeout or a connection failure."""


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
            raise FetchRefused(f"malformed IPv6 literal {host!r}") from exc
    if text.endswith("."):
        text = text[:-1]
    labels = text.split(".")
    if not labels or not _NUMERIC_LABEL.match(labels[-1]):
        return None
    value = _inet_aton(labels)
    if value is None:
        raise FetchRefused(f"malformed IPv4 literal {host!r}")
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


class _CheckedBackend(httpcore.AsyncNetworkBackend):
    """Resolves once, checks every address, then connects to exactly the checked address."""

    def __init__(
        self, *, allow_private_networks: bool, resolver: Resolver, loopback_ports: frozenset[int] = frozenset()
    ) -> None:
        self._allow_private = allow_private_networks
        self._loopback_ports = loopback_ports
        self._resolver = resolver
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Connect to the first reachable checked address of ``host``; TLS is layered on by the caller."""
        addresses = await self._checked_addresses(host, port, timeout)
        failure: Exception | None = None
        for ip in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(ip), port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # addresses is never empty
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend interface
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Never used: outbound fetches are TCP only."""
        raise TargetRefused("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        """Delegate to the default backend."""
        await self._inner.sleep(seconds)

    async def _checked_addresses(self, host: str, port: int, limit: float | None) -> list[IPAddress]:
        """Every address ``host`` stands for, each checked; refuses if any one is forbidden."""
        literal = parse_ip_literal(host)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            addresses = await self._resolve(host, port, limit)
        for ip in addresses:
            why = never_allowed(ip)
            if why is None and not self._allow_private and not (ip.is_loopback and port in self._loopback_ports):
                why = forbidden_reason(ip)
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


def _target(
    url: str, *, allow_http: bool = False, loopback_ports: frozenset[int] = frozenset()
) -> tuple[httpcore.URL, bytes]:
    """Validate ``url`` and split it into the request URL and its ``Host`` header (``http`` only
    when ``allow_http``, where private networks are allowed, or to a named loopback receiver on a
    port in ``loopback_ports``)."""
    if len(url) > MAX_URL_LENGTH:
        raise TargetRefused("URL too long")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise TargetRefused(f"malformed URL: {exc}") from exc
    http_ok = allow_http or loopback_http_allowed(parsed.host, parsed.port, loopback_ports)
    if parsed.scheme != "https" and not (http_ok and parsed.scheme == "http"):
        raise TargetRefused(f"scheme {parsed.scheme!r} refused: https only")
    if parsed.userinfo:
        raise TargetRefused("credentials in the URL refused")
    host = parsed.raw_host
    if not host:
        raise TargetRefused("URL has no host")
    port = parsed.port
    if port is not None and not 0 < port < 65536:
        raise TargetRefused(f"port {port} out of range")
    host_header = b"[" + host + b"]" if b":" in host else host
    if port is not None:
        host_header += b":%d" % port
    scheme = parsed.scheme.encode()
    return httpcore.URL(scheme=scheme, host=host, port=port, target=parsed.raw_path), host_header


def _json_object(body: bytes) -> dict[str, Any]:
    """Decode a strict UTF-8 JSON object (no NaN / Infinity)."""

    def no_constants(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    try:
        value = json.loads(body.decode("utf-8"), parse_constant=no_constants)
    except (UnicodeDecodeError, ValueError) as exc:
        raise FetchRefused(f"body is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise FetchRefused(f"body is JSON {type(value).__name__}, not an object")
    return value


class SafeFetcher:
    """Fetch JSON documents over HTTPS without reaching internal networks. Use as ``async with``."""

    def __init__(
        self,
        *,
        allow_private_networks: bool = False,
        connect_timeout: float = 3.0,
        read_timeout: float = 5.0,
        max_bytes: int = 512 * 1024,
        resolver: Resolver | None = None,
        ca_file: str | None = None,
    ) -> None:
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._max_bytes = max_bytes
        context = ssl.create_default_context()
        if ca_file is not None:
            context.load_verify_locations(cafile=ca_file)
        backend = _CheckedBackend(allow_private_networks=allow_private_networks, resolver=resolver or system_resolver)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=20,
            max_keepalive_connections=10,
            keepalive_expiry=30.0,
            retries=0,
            network_backend=backend,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._pool.aclose()

    async def get_json(self, url: str) -> dict[str, Any]:
        """GET ``url`` and return its JSON object body, or raise :class:`FetchRefused`."""
        target, host_header = _target(url)
        try:
            async with asyncio.timeout(self._connect_timeout + self._read_timeout):
                body = await self._get(target, host_header)
        except FetchRefused:
            raise
        except TimeoutError as exc:
            raise FetchRefused("overall deadline exceeded") from exc
        except httpcore.TimeoutException as exc:
            raise FetchRefused(f"timeout: {type(exc).__name__}") from exc
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol, OSError) as exc:
            raise FetchRefused(f"connection failed: {type(exc).__name__}: {exc}") from exc
        return _json_object(body)

    async def _get(self, target: httpcore.URL, host_header: bytes) -> bytes:
        """One GET; the body is read in chunks and abandoned once it exceeds ``max_bytes``."""
        headers = [(b"Host", host_header), *_HEADERS]
        timeouts = {
            "connect": self._connect_timeout,
            "read": self._read_timeout,
            "write": self._read_timeout,
            "pool": self._connect_timeout,
        }
        async with self._pool.stream("GET", target, headers=headers, extensions={"timeout": timeouts}) as response:
            status = response.status
            if 300 <= status < 400:
                raise FetchRefused(f"redirect {status} not followed")
            if status != 200:
                raise FetchRefused(f"HTTP status {status}")
            for name, value in response.headers:
                if name.lower() == b"content-length" and (not value.isdigit() or int(value) > self._max_bytes):
                    raise FetchRefused(f"declared body size {value.decode('latin-1')} exceeds {self._max_bytes} bytes")
            chunks: list[bytes] = []
            total = 0
            async for chunk in response.aiter_stream():
                total += len(chunk)
                if total > self._max_bytes:
                    raise FetchRefused(f"body exceeds {self._max_bytes} bytes")
                chunks.append(chunk)
        return b"".join(chunks)


@dataclass(frozen=True, slots=True)
class PostResult:
    status: int
    headers: dict[str, str]


class _Connection:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def close(self) -> None:
        self.writer.close()


class _EarlyClose(Exception):
    """A kept-alive connection the server had closed: nothing was read, the request may be resent."""


class SafePoster:
    """POST over HTTP/1.1 keep-alive connections with the same SSRF guard as :class:`SafeFetcher`
    (the address actually connected to is checked; TLS still verifies the name). Used for
    webhooks, where the request rate is high: httpcore's pool costs O(requests x connections)
    of bookkeeping per request, which capped deliveries at a few hundred per second on 2 cores.

    No redirect is followed (a ``3xx`` is returned as it is), no retry except resending once on
    a kept-alive connection that turns out closed before any response byte; the response body is
    read up to ``max_bytes`` and dropped. ``http`` only when ``allow_private_networks``.
    """

    def __init__(
        self,
        *,
        allow_private_networks: bool = False,
        connect_timeout: float = 5.0,
        read_timeout: float = 15.0,
        max_bytes: int = 64 * 1024,
        resolver: Resolver | None = None,
        ca_file: str | None = None,
        idle_per_origin: int = 16,
        loopback_ports: frozenset[int] = frozenset(),
    ) -> None:
        self._allow_http = allow_private_networks
        self._loopback_ports = loopback_ports
        self._backend = _CheckedBackend(
            allow_private_networks=allow_private_networks,
            resolver=resolver or system_resolver,
            loopback_ports=loopback_ports,
        )
        self._connect_timeout, self._read_timeout, self._max_bytes = connect_timeout, read_timeout, max_bytes
        self._ssl = ssl.create_default_context()
        if ca_file is not None:
            self._ssl.load_verify_locations(cafile=ca_file)
        self._idle: dict[tuple[bytes, bytes, int], list[_Connection]] = {}
        self._idle_per_origin = idle_per_origin

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> PostResult:
        """POST ``body`` to ``url`` once; raises :class:`FetchRefused` for a refused target, a
        timeout or a connection failure."""
        target, host_header = _target(url, allow_http=self._allow_http, loopback_ports=self._loopback_ports)
        https = target.scheme == b"https"
        origin = (target.scheme, target.host, target.port or (443 if https else 80))
        head = b"".join(
            [
                b"POST " + target.target + b" HTTP/1.1\r\nHost: " + host_header + b"\r\n",
                b"User-Agent: tocsin-webhooks\r\nAccept-Encoding: identity\r\n",
                *(f"{k}: {v}\r\n".encode("latin-1") for k, v in headers.items()),
                b"Content-Length: %d\r\n\r\n" % len(body),
            ]
        )
        try:
            async with asyncio.timeout(self._connect_timeout + self._read_timeout):
                idle = self._idle.get(origin)
                while idle:
                    conn = idle.pop()
                    if conn.reader.at_eof():
                        conn.close()
                        continue
                    try:
                        return await self._exchange(conn, origin, head + body)
                    except _EarlyClose:
                        conn.close()  # closed by the server while idle: resend on a new connection
                conn = await self._connect(origin, https)
                try:
                    return await self._exchange(conn, origin, head + body)
                except _EarlyClose as exc:
                    raise FetchRefused("connection closed before any response") from exc
        except FetchRefused:
            raise
        except TimeoutError as exc:
            raise FetchRefused("overall deadline exceeded") from exc
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            raise FetchRefused(f"connection failed: {type(exc).__name__}: {exc}") from exc

    async def _connect(self, origin: tuple[bytes, bytes, int], https: bool) -> _Connection:
        host = origin[1].decode("ascii")
        addresses = await self._backend._checked_addresses(host, origin[2], self._connect_timeout)
        failure: Exception | None = None
        for ip in addresses:
            try:
                reader, writer = await asyncio.open_connection(
                    str(ip),
                    origin[2],
                    ssl=self._ssl if https else None,
                    server_hostname=host if https else None,
                    limit=self._max_bytes,
                )
                return _Connection(reader, writer)
            except OSError as exc:
                failure = exc
        assert failure is not None  # addresses is never empty
        raise failure

    async def _exchange(self, conn: _Connection, origin: tuple[bytes, bytes, int], request: bytes) -> PostResult:
        """One request and its response on ``conn``; the connection is closed on any failure
        (a timeout cancels this coroutine: it is closed then too)."""
        try:
            return await self._request(conn, origin, request)
        except BaseException:
            conn.close()
            raise

    async def _request(self, conn: _Connection, origin: tuple[bytes, bytes, int], request: bytes) -> PostResult:
        conn.writer.write(request)
        try:
            status_line = await conn.reader.readuntil(b"\r\n")
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                raise _EarlyClose from exc
            raise
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise ValueError("not an HTTP/1.x response")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for _ in range(200):  # header lines until the empty one
            line = await conn.reader.readuntil(b"\r\n")
            if line == b"\r\n":
                break
            name, sep, value = line.partition(b":")
            if sep:
                headers[name.decode("latin-1").strip().lower()] = value.decode("latin-1").strip()
        else:
            raise ValueError("too many response header lines")
        reusable = await self._drain(conn, headers, status)
        if reusable and len(self._idle.setdefault(origin, [])) < self._idle_per_origin:
            self._idle[origin].append(conn)
        else:
            conn.close()
        return PostResult(status, headers)

    async def _drain(self, conn: _Connection, headers: dict[str, str], status: int) -> bool:
        """Read (and drop) the response body; whether the connection can carry another request."""
        keep = headers.get("connection", "").lower() != "close"
        if status in (204, 304) or 100 <= status < 200:
            return keep
        if headers.get("transfer-encoding", "").lower() == "chunked":
            total = 0
            while True:
                size = int((await conn.reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
                total += size
                if total > self._max_bytes:
                    return False
                await conn.reader.readexactly(size + 2)
                if size == 0:
                    return keep
        length = headers.get("content-length")
        if length is not None and length.isdigit():
            if int(length) > self._max_bytes:
                return False
            await conn.reader.readexactly(int(length))
            return keep
        return False  # delimited by close: nothing more to read that we need
