"""The client address behind proxies: X-Forwarded-For is believed only from TOCSIN_TRUSTED_PROXIES,
read from the right, and never lets a caller pick its own address."""

from __future__ import annotations

import ipaddress

import pytest
from pydantic import ValidationError

from app.domain.shared.client_address import client_address
from app.settings import Settings

PROXIES = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("192.0.2.7/32"), ipaddress.ip_network("fd00::/8"))


@pytest.mark.parametrize(
    ("peer", "forwarded", "proxies", "client"),
    [
        # no trusted proxies: the header is ignored, whoever sends it
        ("203.0.113.5", ["198.51.100.1"], (), "203.0.113.5"),
        ("127.0.0.1", ["198.51.100.1"], (), "127.0.0.1"),
        # a peer that is not a trusted proxy: ignored too
        ("203.0.113.5", ["198.51.100.1"], PROXIES, "203.0.113.5"),
        # a trusted proxy: the address it appended
        ("10.1.2.3", ["198.51.100.1"], PROXIES, "198.51.100.1"),
        ("192.0.2.7", ["198.51.100.1:4711"], PROXIES, "198.51.100.1"),
        ("fd00::1", ["[2001:db8::5]:443"], PROXIES, "2001:db8::5"),
        ("::ffff:10.0.0.1", ["2001:db8::5"], PROXIES, "2001:db8::5"),
        # what the client wrote itself (left of the proxy's entry) is never believed
        ("10.1.2.3", ["1.1.1.1, 198.51.100.1"], PROXIES, "198.51.100.1"),
        ("10.1.2.3", ["1.1.1.1", "198.51.100.1"], PROXIES, "198.51.100.1"),
        # a chain of trusted proxies is walked through
        ("10.1.2.3", ["1.1.1.1, 198.51.100.1, 10.9.9.9"], PROXIES, "198.51.100.1"),
        # nothing forwarded, or garbage where the client's address should be: the proxy's own
        ("10.1.2.3", [], PROXIES, "10.1.2.3"),
        ("10.1.2.3", [""], PROXIES, "10.1.2.3"),
        ("10.1.2.3", ["1.1.1.1, unknown"], PROXIES, "10.1.2.3"),
        # only trusted proxies in the chain: the first of them
        ("10.1.2.3", ["10.0.0.9, 10.0.0.8"], PROXIES, "10.0.0.9"),
    ],
)
def test_the_client_is_the_first_untrusted_address_from_the_right(
    peer: str, forwarded: list[str], proxies: tuple[ipaddress.IPv4Network, ...], client: str
) -> None:
    assert client_address(peer, forwarded, proxies) == client


def test_trusted_proxies_are_read_from_a_comma_separated_setting() -> None:
    settings = Settings(trusted_proxies="10.0.0.0/8, 192.0.2.7 ,fd00::/8")  # type: ignore[arg-type]
    assert settings.trusted_proxies == PROXIES
    assert Settings().trusted_proxies == (), "nobody is trusted by default"


@pytest.mark.parametrize("value", ["10.0.0.0/33", "proxy.internal", "10.0.0.1/8"])
def test_a_trusted_proxy_that_is_not_an_address_or_network_is_refused(value: str) -> None:
    with pytest.raises(ValidationError, match="TOCSIN_TRUSTED_PROXIES"):
        Settings(trusted_proxies=value)  # type: ignore[arg-type]
