"""Free ports, open ports, and a coroutine run to its end from synchronous code: what the local
components and the tests' fixtures use to start things on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on ``host`` right now."""
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """Return ``count`` distinct TCP ports that are free on ``host`` right now."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))  # held open until all are chosen, so no port is chosen twice
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
