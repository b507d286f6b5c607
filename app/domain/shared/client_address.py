"""Which address a request comes from, for per-client rate limits and the exchange log, and
which source a rate limit counts it against (:func:`rate_limit_key`).

The connecting peer, unless it is one of the trusted proxies (``TOCSIN_TRUSTED_PROXIES``): then
``X-Forwarded-For`` is read from the right (each proxy appends the address it received the
request from) and the first address that is not a trusted proxy is the client. Entries to the
left of it were written by the client itself and are never believed. With no trusted proxies
the header is ignored, so a caller cannot choose its own rate-limit bucket.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _address(entry: str) -> Address | None:
    """An ``X-Forwarded-For`` entry as an address: bare, ``v4:port`` or ``[v6]:port``; None if it is none."""
    entry = entry.strip()
    if entry.startswith("["):
        entry = entry[1 : entry.find("]")] if "]" in entry else ""
    elif entry.count(":") == 1:
        entry = entry.partition(":")[0]
    try:
        return ipaddress.ip_address(entry)
    except ValueError:
        return None


def _trusted(address: Address, proxies: tuple[Network, ...]) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in proxies)


def client_address(peer: str, forwarded_for: Iterable[str], proxies: tuple[Network, ...]) -> str:
    """The client's address: ``peer``, or what the trusted proxies in front of it forwarded.

    ``forwarded_for`` holds the values of every ``X-Forwarded-For`` header, in order. A malformed
    entry where the client's address should be gives the proxy's address (the caller learns
    nothing, and shares the proxy's bucket rather than picking its own).
    """
    peer_address = _address(peer)
    if not proxies or peer_address is None or not _trusted(peer_address, proxies):
        return peer
    entries = [entry for value in forwarded_for for entry in value.split(",")]
    client = peer_address
    for entry in reversed(entries):
        address = _address(entry)
        if address is None:
            return peer
        client = address
        if not _trusted(address, proxies):
            break
    return str(client)


# An IPv6 client is given a /64 at least (RFC 6177): all its addresses are one source to a limit.
IPV6_SOURCE_PREFIX = 64


def rate_limit_key(address: str) -> str:
    """The source a per-client limit counts ``address`` against: an IPv4 address itself (also
    written IPv4-mapped), an IPv6 address's /64 (``2001:db8:1:2::/64``), else the text as is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        host_bits = 128 - IPV6_SOURCE_PREFIX
        return str(ipaddress.IPv6Network((int(parsed) >> host_bits << host_bits, IPV6_SOURCE_PREFIX)))
    return str(parsed)
