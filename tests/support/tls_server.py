"""Local HTTPS for the tests: a throwaway certificate authority and a threaded TLS HTTP server.

:class:`TestCA` writes ``ca.pem`` and issues server certificates; :class:`TlsHttpServer` answers
GETs from a handler function on 127.0.0.1 (free port) in a background thread. The OIDC issuer
in :mod:`tests.support.oidc_issuer` is built on both; the fetch tests use them directly.
"""

from __future__ import annotations

import ssl
import sys
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from cryptography.hazmat.primitives import serialization

from devstack.tls import new_ca, private_pem, server_certificate

VALID_DAYS = 2
HttpReply = tuple[int, dict[str, str], bytes | Iterable[bytes]]
Handler = Callable[[str, str], HttpReply]  # (method, path) -> (status, headers, body)


class TestCA:
    """A throwaway certificate authority; clients trust ``ca_file`` (``ca.pem``). Certificates
    as the local Kafka's (devstack/tls.py), valid two days."""

    __test__ = False  # not a test class

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._key, self.certificate = new_ca("Tocsin Test CA", VALID_DAYS)
        self.ca_file = self.directory / "ca.pem"
        self.ca_file.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))

    def issue(self, names: Iterable[str] = ("localhost", "127.0.0.1"), *, stem: str = "server") -> tuple[Path, Path]:
        """A server certificate for ``names`` (DNS names or IP addresses): ``(cert.pem, key.pem)``."""
        names = list(names)
        key, cert = server_certificate(self._key, self.certificate, names, names[0], VALID_DAYS)
        cert_file, key_file = self.directory / f"{stem}.pem", self.directory / f"{stem}-key.pem"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(private_pem(key))
        return cert_file, key_file


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins every handler thread
    owner: TlsHttpServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up or reject the certificate are expected: record, stay quiet."""
        self.owner.errors.append(repr(sys.exc_info()[1]))


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    timeout = 10

    def setup(self) -> None:
        self.request.settimeout(self.timeout)
        self.request.do_handshake()  # in this handler thread, never in the accept loop
        super().setup()

    def do_GET(self) -> None:
        self.server.owner._respond(self)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``hits`` instead of the access log."""


class TlsHttpServer:
    """HTTPS on 127.0.0.1 (free port) answering every GET with ``handler(method, path)``.

    A ``bytes`` body gets a ``Content-Length``; an iterable body is streamed without one
    (HTTP/1.0, closed at the end). Handlers may block on ``stopping`` to stall a reply.
    """

    def __init__(self, cert_file: Path, key_file: Path, handler: Handler) -> None:
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(cert_file, key_file)
        self._handler = handler
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._httpd: _Server | None = None
        self.hits: list[str] = []
        self.errors: list[str] = []
        self.stopping = threading.Event()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    def url(self, path: str = "/", host: str = "localhost") -> str:
        return f"https://{host}:{self.port}{path}"

    def hit_count(self, path: str) -> int:
        with self._lock:
            return self.hits.count(path)

    def start(self) -> Self:
        httpd = _Server(("127.0.0.1", 0), _RequestHandler)
        httpd.owner = self
        httpd.socket = self._context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=15)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _respond(self, request: _RequestHandler) -> None:
        path = request.path.split("?", 1)[0]
        with self._lock:
            self.hits.append(path)
        status, headers, body = self._handler(request.command, path)
        request.send_response(status)
        for name, value in headers.items():
            request.send_header(name, value)
        if isinstance(body, bytes):
            request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)
            return
        request.end_headers()
        for chunk in body:
            request.wfile.write(chunk)
