"""devstack/ports.free_ports: ports a server binds later are chosen where no outgoing connection
takes them. A CI run failed when a worker, binding its port only once the broker answered (16 s
later), found it taken: 'address already in use'."""

from __future__ import annotations

import socket

import pytest

from devstack.ports import EPHEMERAL_RANGE, free_ports, listening_ports


@pytest.mark.skipif(not EPHEMERAL_RANGE.exists(), reason="no Linux ephemeral port range to stay out of")
def test_chosen_ports_are_below_the_ephemeral_range() -> None:
    low = int(EPHEMERAL_RANGE.read_text().split()[0])
    ports = free_ports(50)
    assert len(set(ports)) == 50, "no port chosen twice"
    assert all(port < low for port in ports), [p for p in ports if p >= low]
    assert listening_ports() and max(listening_ports()) < low


def test_a_chosen_port_can_be_bound() -> None:
    (port,) = free_ports(1)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
