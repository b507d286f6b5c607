"""Free ports, open ports, and a coroutine run to its end from synchronous code: what the local
components and the tests' fixtures use to start things on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on ``host`` right now."""
    return free_ports(1, host)[0]


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def listening_ports() -> range:
    """The ports below the kernel's ephemeral range (where it picks the local port of every
    outgoing connection): a port chosen here stays free until its server binds it, however late.
    Empty where the range cannot be read (then the kernel picks, as ``bind(0)`` does)."""
    try:
        low = int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return range(0)
    return range(10_000, low) if low > 11_000 else range(0)


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """Return ``count`` distinct TCP ports that are free on ``host`` right now, chosen below the
    ephemeral range: a worker that binds its port only once the broker answers found it taken by
    some client's outgoing connection (a test failed on 'address already in use')."""
    candidates = listening_ports()
    with contextlib.ExitStack() as stack:
        ports: list[int] = []
        tries = 0
        while len(ports) < count:
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            tries += 1
            port = random.choice(candidates) if candidates and tries <= 1000 else 0
            try:
                sock.bind((host, port))  # held open until all are chosen, so no port is chosen twice
            except OSError:  # taken: another one
                continue
            ports.append(int(sock.getsockname()[1]))
        return ports


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """Return True if something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def run_coro_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine in a fresh event loop, even if this thread already runs one.

    With a running loop here, the coroutine runs in a helper thread (this one blocks).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with ThreadPoolExecutor(1, thread_name_prefix="tocsin-sync-coro") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()
