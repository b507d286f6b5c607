"""The hand-written HTTP/1.1 webhook poster, still the webhooks' default until the A/B bench
(``make bench --only webhook_client``) compares it with :class:`app.net.client.HttpClient`."""

from __future__ import annotations

import asyncio
import ssl

from app.net.errors import FetchRefused
from app.net.ssrf import CheckedResolver, Resolver, system_resolver
from app.net.target import target
from app.net.transport import PostResult


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
        self._backend = CheckedResolver(
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
        checked = target(url, allow_http=self._allow_http, loopback_ports=self._loopback_ports)
        https = checked.scheme == "https"
        origin = (checked.scheme.encode(), checked.host.encode(), checked.port)
        host_header = checked.url.raw_authority.encode()
        head = b"".join(
            [
                b"POST " + checked.url.raw_path_qs.encode() + b" HTTP/1.1\r\nHost: " + host_header + b"\r\n",
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
        addresses = await self._backend.checked_addresses(host, origin[2], self._connect_timeout)
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
