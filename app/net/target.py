"""Which URLs an outbound request may target, before any lookup or connection."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from yarl import URL

from app.domain.workflows.workflow import loopback_http_allowed
from app.net.errors import TargetRefused

MAX_URL_LENGTH = 2048


@dataclass(frozen=True, slots=True)
class Target:
    """A validated request URL: ``url`` is rebuilt from the checked parts only, so the client
    connects to exactly the host that was checked."""

    url: URL
    scheme: str
    host: str
    port: int


def target(url: str, *, allow_http: bool = False, loopback_ports: frozenset[int] = frozenset()) -> Target:
    """Validate ``url``: ``https`` (``http`` only when ``allow_http``, where private networks are
    allowed, or to a named loopback receiver on a port in ``loopback_ports``), no credentials, a
    host, a port in range."""
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
    raw_host = parsed.raw_host
    if not raw_host:
        raise TargetRefused("URL has no host")
    port = parsed.port
    if port is not None and not 0 < port < 65536:
        raise TargetRefused(f"port {port} out of range")
    host = raw_host.decode("ascii")
    authority = f"[{host}]" if ":" in host else host
    if port is not None:
        authority += f":{port}"
    try:
        rebuilt = URL(f"{parsed.scheme}://{authority}{parsed.raw_path.decode('ascii')}", encoded=True)
    except ValueError as exc:
        raise TargetRefused(f"malformed URL: {exc}") from exc
    return Target(rebuilt, parsed.scheme, host, port or (443 if parsed.scheme == "https" else 80))
