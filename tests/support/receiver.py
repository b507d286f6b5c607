"""A webhook receiver on loopback that records every delivery (headers and JSON body)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with got.lock:
                got.items.append((self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw or b"{}")))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
