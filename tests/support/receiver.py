"""HTTP receivers on loopback for the tests: ``loopback_server`` runs any handler class on a free
port, ``QuietHandler`` gives handlers the body, lower-cased headers and an empty answer, and
``webhook_receiver`` records every delivery (headers and JSON body)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing, with the helpers every receiver here uses."""

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def lower_headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def answer_empty(self, code: int, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def loopback_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serves ``handler`` on 127.0.0.1 (a free port), a daemon thread per request; yields the base
    URL, then stops."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class Deliveries:
    items: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)  # (path, headers, body)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> list[tuple[str, dict[str, str], dict[str, Any]]]:
        with self.lock:
            return list(self.items)


@contextmanager
def webhook_receiver() -> Iterator[tuple[Deliveries, str]]:
    """Answers 204 to every POST; yields the record and the base URL."""
    got = Deliveries()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            raw = self.read_body()
            with got.lock:
                got.items.append((self.path, self.lower_headers(), json.loads(raw or b"{}")))
            self.answer_empty(204)

    with loopback_server(Handler) as url:
        yield got, url
