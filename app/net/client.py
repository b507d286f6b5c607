""":class:`HttpClient`, the one outbound HTTP client: webhooks (POST) and OIDC discovery/JWKS (GET).

aiohttp underneath: its C HTTP/1.1 parser reads past interim ``1xx`` answers to the final one
and consumes chunked trailers before a connection goes back to the pool; connections are kept
alive and limited per host. Every connection is opened through :class:`~app.net.ssrf.CheckedResolver`
(the address actually dialled is the one checked); IP-literal hosts, which aiohttp does not
resolve, are checked before the request. No redirect is followed, no cookie kept, no proxy or
CA setting read from the environment: ``proxy`` (``TOCSIN_HTTP_PROXY``) is the only proxy.

Behind a proxy the proxy resolves the target's name, so it, not this client, must refuse
internal addresses for names (an egress proxy such as smokescreen); literal addresses in the
URL are still refused here, and the proxy's own address is checked against
:func:`~app.net.ssrf.never_allowed` only.
"""

from __future__ import annotations

import asyncio
import ssl
from types import SimpleNamespace, TracebackType
from typing import Any, Self

import aiohttp
from aiohttp.connector import NEEDS_CLEANUP_CLOSED

from app.caches.lru import CountingLRU
from app.net.errors import FetchRefused, TargetRefused
from app.net.ssrf import CheckedResolver, Resolver, never_allowed, parse_ip_literal, system_resolver
from app.net.target import Target, target
from app.net.transport import PostResult, json_object

TARGETS_KEPT = 4096  # checked URLs remembered per client
_GET_HEADERS = {"Accept": "application/json", "Accept-Encoding": "identity", "User-Agent": "tocsin-fetch/1"}
_POST_HEADERS = {"Accept": "*/*", "Accept-Encoding": "identity", "User-Agent": "tocsin-webhooks"}


class HttpClient:
    """Requests that never reach internal networks (see :mod:`app.net.ssrf`). Implements
    :class:`~app.net.transport.Transport`; use as ``async with`` or call :meth:`aclose`.

    ``allow_private_networks`` also allows plain ``http`` for :meth:`post` (``get_json`` is
    ``https`` only); ``loopback_ports`` allows ``http`` to a loopback receiver on those ports.
    Each request has ``connect_timeout`` to connect, ``read_timeout`` between reads, and both
    summed as an overall deadline; bodies are read up to ``max_bytes``.
    """

    def __init__(
        self,
        *,
        allow_private_networks: bool = False,
        connect_timeout: float = 3.0,
        read_timeout: float = 5.0,
        max_bytes: int = 512 * 1024,
        resolver: Resolver | None = None,
        ca_file: str | None = None,
        max_connections_per_host: int = 64,
        loopback_ports: frozenset[int] = frozenset(),
        proxy: str | None = None,
    ) -> None:
        self._allow_http = allow_private_networks
        self._loopback_ports = loopback_ports
        self._connect_timeout, self._read_timeout, self._max_bytes = connect_timeout, read_timeout, max_bytes
        self._per_host = max_connections_per_host
        self._ssl = ssl.create_default_context()
        if ca_file is not None:
            self._ssl.load_verify_locations(cafile=ca_file)
        exempt = None
        if proxy is not None:
            checked = target(proxy, allow_http=True)
            if checked.scheme != "http":
                raise TargetRefused("the proxy must be an http:// URL")
            literal = parse_ip_literal(checked.host)  # aiohttp never resolves a literal proxy
            why = never_allowed(literal) if literal is not None else None
            if why is not None:
                raise TargetRefused(f"proxy {checked.host}: {why} address refused")
            self._proxy: Target | None = checked
            exempt = (checked.host.lower(), checked.port)
        else:
            self._proxy = None
        self.resolver = CheckedResolver(
            allow_private_networks=allow_private_networks,
            resolver=resolver or system_resolver,
            loopback_ports=loopback_ports,
            exempt=exempt,
            timeout=connect_timeout,
        )
        self._session: aiohttp.ClientSession | None = None
        # URLs that passed :meth:`_checked` (parsing and checking one cost a third of a webhook POST)
        self.targets: CountingLRU[tuple[str, bool], Target] = CountingLRU(TARGETS_KEPT)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close pooled connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        """The session, made on first use: aiohttp binds it to the running loop."""
        if self._session is None:
            connector = aiohttp.TCPConnector(
                resolver=self.resolver,
                use_dns_cache=False,  # one lookup (and check) per new connection
                ssl=self._ssl,
                limit=0,
                limit_per_host=self._per_host,
                keepalive_timeout=30.0,
                # a TLS connection closed mid-answer (a read timeout) is aborted at close, not left
                # waiting for the peer's close_notify (only Pythons with that asyncio bug need it)
                enable_cleanup_closed=NEEDS_CLEANUP_CLOSED,
            )
            reuse = aiohttp.TraceConfig()
            reuse.on_connection_reuseconn.append(_mark_reused)
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                trust_env=False,
                timeout=aiohttp.ClientTimeout(
                    total=None, sock_connect=self._connect_timeout, sock_read=self._read_timeout
                ),
                trace_configs=[reuse],
            )
        return self._session

    async def _checked(self, url: str, *, allow_http: bool) -> Target:
        """The validated target; an IP literal is checked here, before anything connects. Both
        depend on the URL and this client's settings only: a URL that passed is remembered (a
        name's addresses are still looked up and checked at every new connection)."""
        known = self.targets.get((url, allow_http))
        if known is not None:
            return known
        checked = target(url, allow_http=allow_http, loopback_ports=self._loopback_ports)
        if parse_ip_literal(checked.host) is not None:
            await self.resolver.checked_addresses(checked.host, checked.port, None)
        self.targets[(url, allow_http)] = checked
        return checked

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> PostResult:
        """POST ``body`` to ``url`` once; a redirect or any status is returned as it is. Resent
        only when a kept-alive connection turns out closed by the receiver (RFC 9112 §9.3.1)."""
        checked = await self._checked(url, allow_http=self._allow_http)
        async with self._failures():
            for attempt in (1, 2):
                ctx = SimpleNamespace(reused=False)
                try:
                    async with self._client().post(
                        checked.url,
                        data=body,
                        headers={**_POST_HEADERS, **headers},
                        allow_redirects=False,
                        proxy=self._proxy.url if self._proxy else None,
                        trace_request_ctx=ctx,
                    ) as response:
                        await self._drop_body(response)
                        return PostResult(response.status, {k.lower(): v for k, v in response.headers.items()})
                except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
                    if attempt == 2 or not ctx.reused or isinstance(exc, aiohttp.ClientConnectorError):
                        raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def get_json(self, url: str) -> dict[str, Any]:
        """GET ``url`` (https only) and return its JSON object body; only ``200`` is accepted."""
        checked = await self._checked(url, allow_http=False)
        async with (
            self._failures(),
            self._client().get(
                checked.url,
                headers=_GET_HEADERS,
                allow_redirects=False,
                proxy=self._proxy.url if self._proxy else None,
            ) as response,
        ):
            status = response.status
            if 300 <= status < 400:
                raise FetchRefused(f"redirect {status} not followed")
            if status != 200:
                raise FetchRefused(f"HTTP status {status}")
            declared = response.headers.get("Content-Length")
            if declared is not None and (not declared.isdigit() or int(declared) > self._max_bytes):
                raise FetchRefused(f"declared body size {declared} exceeds {self._max_bytes} bytes")
            chunks: list[bytes] = []
            total = 0
            async for chunk in response.content.iter_any():
                total += len(chunk)
                if total > self._max_bytes:
                    raise FetchRefused(f"body exceeds {self._max_bytes} bytes")
                chunks.append(chunk)
        return json_object(b"".join(chunks))

    async def _drop_body(self, response: aiohttp.ClientResponse) -> None:
        """Read and drop the body up to ``max_bytes``; past that the connection is closed, not reused."""
        declared = response.content_length
        if declared is not None and declared > self._max_bytes:
            response.close()
            return
        total = 0
        async for chunk in response.content.iter_any():
            total += len(chunk)
            if total > self._max_bytes:
                response.close()
                return

    def _failures(self) -> _Failures:
        return _Failures(self._connect_timeout + self._read_timeout)


class _Failures:
    """The overall deadline, and every failure below it as a :class:`FetchRefused` with its cause."""

    def __init__(self, deadline: float) -> None:
        self._timeout = asyncio.timeout(deadline)

    async def __aenter__(self) -> None:
        await self._timeout.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self._timeout.__aexit__(exc_type, exc, tb)
        except TimeoutError as expired:
            raise FetchRefused("overall deadline exceeded") from expired
        if exc is None or isinstance(exc, FetchRefused) or not isinstance(exc, Exception):
            return
        raise _refusal(exc) from exc


def _refusal(exc: Exception) -> FetchRefused:
    """The :class:`FetchRefused` that stands for an aiohttp or socket failure."""
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return FetchRefused("timeout: ConnectTimeout")
    if isinstance(exc, aiohttp.SocketTimeoutError):
        return FetchRefused("timeout: ReadTimeout")
    if isinstance(exc, TimeoutError):
        return FetchRefused(f"timeout: {type(exc).__name__}")
    if isinstance(exc, aiohttp.ClientSSLError):
        return FetchRefused(f"connection failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, aiohttp.ClientConnectorError):
        cause = exc.os_error
        return FetchRefused(f"connection failed: {type(cause).__name__}: {cause}")
    return FetchRefused(f"connection failed: {type(exc).__name__}: {exc}")


async def _mark_reused(session: aiohttp.ClientSession, trace: SimpleNamespace, params: object) -> None:
    trace.trace_request_ctx.reused = True
