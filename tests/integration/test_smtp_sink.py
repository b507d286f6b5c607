"""The SMTP sink (tocsin run, the e2e tests) stops cleanly while clients are still connected:
a worker keeps its SMTP connection between messages, and a killed one's may still look open."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

import uvloop
from aiosmtpd.controller import Controller

from devstack.ports import free_port
from devstack.smtp_sink import MailDir, SinkController


def _stop_with_a_client_connected(controller_class: type[Controller], directory: Path) -> list[BaseException]:
    """Start the controller on uvloop (as in the worker and the tests), connect a client that
    says EHLO and stays, end its session's task as a cancel before the command loop does, stop
    the controller; what the controller's thread raised."""
    raised: list[BaseException] = []
    previous = threading.excepthook

    def hook(args: Any) -> None:
        raised.append(args.exc_value)

    port = free_port()
    controller = controller_class(MailDir(directory), hostname="127.0.0.1", port=port, loop=uvloop.new_event_loop())
    controller.start()
    threading.excepthook = hook
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            assert client.recv(1024).startswith(b"220")
            client.sendall(b"EHLO worker\r\n")
            assert b"250" in client.recv(1024)
            # The state CI met: a session whose task ended without closing its connection (aiosmtpd
            # closes it only when the task is cancelled inside its command loop; a task cancelled
            # before it started, e.g. by an EOF from a killed worker right after connecting, does not).
            session = controller.smtpd
            ended = threading.Event()

            def end_task_leaving_the_connection_open() -> None:
                session._writer.close = lambda: None
                session._handler_coroutine.cancel()
                session._handler_coroutine.add_done_callback(lambda _task: ended.set())

            controller.loop.call_soon_threadsafe(end_task_leaving_the_connection_open)
            assert ended.wait(10), "the session's task did not end"
            assert session.transport is not None and not session.transport.is_closing()
            controller.stop()
    finally:
        threading.excepthook = previous
    return raised


def test_stopping_with_a_client_connected_closes_the_session(tmp_path: Path) -> None:
    """aiosmtpd's own Controller, in the same state, never returns from stop() (its server waits
    for that connection to close) or, once the peer is gone, fails closing its loop with
    ``OSError: [Errno 16] Device or resource busy``, as one CI run did."""
    assert _stop_with_a_client_connected(SinkController, tmp_path) == []
