"""Issue 16, item 5: `make run` no longer opens private networks to webhooks. A local receiver
is reached through an explicit, narrow allowance (named loopback host:port), and link-local and
cloud metadata addresses are refused whatever is set, private networks allowed included."""

from __future__ import annotations

import ipaddress

import pytest
from pydantic import ValidationError

from app.domain.workflows.workflow import webhook_url_problem
from app.net.errors import TargetRefused
from app.net.ssrf import CheckedResolver
from app.net.target import target
from app.settings import Settings
from app.settings.delivery import OutboundSettings


async def _no_resolver(host: str, port: int) -> list[str]:
    raise AssertionError("literals are never resolved")


async def _check(address: str, port: int, *, allow_private: bool, ports: frozenset[int] = frozenset()) -> None:
    backend = CheckedResolver(allow_private_networks=allow_private, resolver=_no_resolver, loopback_ports=ports)
    await backend.checked_addresses(address, port, 1.0)


@pytest.mark.parametrize(
    "address",
    ["169.254.169.254", "169.254.0.1", "100.100.100.200", "fe80::1", "fd00:ec2::254", "::ffff:169.254.169.254"],
)
async def test_metadata_and_link_local_are_refused_even_with_private_networks_allowed(address: str) -> None:
    """Before: TOCSIN_ALLOW_PRIVATE_NETWORKS=true (which `tocsin run` always set) reached them."""
    with pytest.raises(TargetRefused) as refused:
        await _check(address, 80, allow_private=True)
    assert "address refused" in refused.value.reason


async def test_private_networks_stay_reachable_where_allowed() -> None:
    for address in ("10.0.0.5", "192.168.1.1", "127.0.0.1", "::1"):
        await _check(address, 8080, allow_private=True)


async def test_a_listed_loopback_port_is_reachable_and_nothing_else_is() -> None:
    ports = frozenset({9000})
    await _check("127.0.0.1", 9000, allow_private=False, ports=ports)
    await _check("::1", 9000, allow_private=False, ports=ports)
    for address, port in (("127.0.0.1", 9001), ("10.0.0.5", 9000), ("192.168.1.1", 9000), ("169.254.169.254", 9000)):
        with pytest.raises(TargetRefused) as refused:
            await _check(address, port, allow_private=False, ports=ports)
        assert "address refused" in refused.value.reason, (address, port)


def test_plain_http_only_to_a_listed_loopback_receiver() -> None:
    ports = frozenset({9000})
    assert webhook_url_problem("http://127.0.0.1:9000/hook", allow_http=False, loopback_ports=ports) is None
    assert webhook_url_problem("http://localhost:9000/hook", allow_http=False, loopback_ports=ports) is None
    for url in ("http://127.0.0.1:9001/hook", "http://example.com:9000/hook", "http://10.0.0.5:9000/"):
        assert webhook_url_problem(url, allow_http=False, loopback_ports=ports) is not None, url
    target("http://127.0.0.1:9000/hook", loopback_ports=ports)
    with pytest.raises(TargetRefused) as refused:
        target("http://example.com:9000/hook", loopback_ports=ports)
    assert "https only" in refused.value.reason


def test_the_allowance_names_loopback_hosts_only() -> None:
    outbound = OutboundSettings(loopback_targets="127.0.0.1:9000, localhost:9001,[::1]:9002")  # type: ignore[arg-type]
    assert outbound.loopback_ports == frozenset({9000, 9001, 9002})
    for bad in ("10.0.0.5:80", "169.254.169.254:80", "example.com:80", "127.0.0.1", "127.0.0.1:0", "localhost:x"):
        with pytest.raises(ValidationError, match="TOCSIN_LOOPBACK_TARGETS"):
            OutboundSettings(loopback_targets=bad)  # type: ignore[arg-type]
    assert Settings().outbound.loopback_ports == frozenset(), "nothing is allowed unless listed"
    assert Settings().outbound.allow_private_networks is False


def test_tocsin_run_no_longer_opens_private_networks() -> None:
    """The local stack (`make run`) starts the API and the worker without TOCSIN_ALLOW_PRIVATE_NETWORKS."""
    import inspect

    from cli import run as cli

    assert "TOCSIN_ALLOW_PRIVATE_NETWORKS" not in inspect.getsource(cli)
    assert ipaddress.ip_address("127.0.0.1").is_loopback
