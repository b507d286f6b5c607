"""Local HTTPS for the tests: a throwaway certificate authority and a threaded TLS HTTP server.

:class:`TestCA` writes ``ca.pem`` and issues server certificates; :class:`TlsHttpServer` answers
GETs from a handler function on 127.0.0.1 (free port) in a background thread. The OIDC issuer
in :mod:`tests.support.oidc_issuer` is built on both; the fetch tests use them directly.
"""

from __future__ import annotations

import ipaddress
import ssl
import sys
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

HttpReply = tuple[int, dict[str, str], bytes | Iterable[bytes]]
Handler = Callable[[str, str], HttpReply]  # (method, path) -> (status, headers, body)


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


class TestCA:
    """A throwaway certificate authority; clients trust ``ca_file`` (``ca.pem``)."""

    __test__ = False  # not a test class

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Tocsin Test CA")])
        usage = x509.KeyUsage(True, False, False, False, False, True, True, False, False)
        self.certificate = (
            self._builder(name, self._key.public_key())
            .issuer_name(name)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(usage, critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.ca_file = self.directory / "ca.pem"
        self.ca_file.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))

    @staticmethod
    def _builder(subject: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        now = datetime.now(UTC)
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1))
            .not_valid_after(now + timedelta(days=2))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        )

    def issue(self, names: Iterable[str] = ("localhost", "127.0.0.1"), *, stem: str = "server") -> tuple[Path, Path]:
        """A server certificate for ``names`` (DNS names or IP addresses): ``(cert.pem, key.pem)``."""
        names = list(names)
        key = ec.generate_private_key(ec.SECP256R1())
        alt: list[x509.GeneralName] = []
        for item in names:
            try:
                alt.append(x509.IPAddress(ipaddress.ip_address(item)))
            except ValueError:
                alt.append(x509.DNSName(item))
        ca_ski = self.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        cert = (
            self._builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]), key.public_key())
            .issuer_name(self.certificate.subject)
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        cert_file, key_file = self.directory / f"{stem}.pem", self.directory / f"{stem}-key.pem"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(_pem(key))
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
