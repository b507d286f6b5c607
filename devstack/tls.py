"""A self-made certificate authority and a broker certificate for the local Kafka's TLS listener.

:func:`broker_tls` writes ``ca.pem`` (what clients trust: TOCSIN_KAFKA_SSL_CA_FILE) and returns the
broker's certificate chain and PKCS#8 private key as PEM text, which Kafka reads from its
``ssl.keystore.certificate.chain`` / ``ssl.keystore.key`` properties (``ssl.keystore.type=PEM``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_DAYS = 365


@dataclass(frozen=True)
class BrokerTls:
    ca_file: Path  # the CA certificate clients trust
    chain_pem: str  # the broker's certificate, then the CA's
    key_pem: str  # the broker's private key, PKCS#8, unencrypted


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey, valid_days: int
) -> x509.CertificateBuilder:
    now = datetime.now(UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=valid_days))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _alt_names(names: Iterable[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for name in names:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            out.append(x509.DNSName(name))
    return out


def _common_name(name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])


def new_ca(common_name: str, valid_days: int = VALID_DAYS) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A self-signed certificate authority (may sign server certificates only): its key and certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _common_name(common_name)
    usage = x509.KeyUsage(True, False, False, False, False, True, True, False, False)
    certificate = (
        _builder(name, name, key.public_key(), valid_days)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, certificate


def server_certificate(
    ca_key: ec.EllipticCurvePrivateKey,
    ca: x509.Certificate,
    names: Iterable[str],
    common_name: str,
    valid_days: int = VALID_DAYS,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A server certificate for ``names`` (DNS names or IP addresses) signed by ``ca``: its key and
    certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    ca_ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    usage = x509.KeyUsage(True, False, False, False, False, False, False, False, False)
    certificate = (
        _builder(_common_name(common_name), ca.subject, key.public_key(), valid_days)
        .add_extension(x509.SubjectAlternativeName(_alt_names(names)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, certificate


def private_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    """The key as unencrypted PKCS#8 PEM."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def broker_tls(directory: Path, names: Iterable[str] = ("localhost", "127.0.0.1")) -> BrokerTls:
    """A new CA (``directory/ca.pem``) and a broker certificate it signed for ``names``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = new_ca("Tocsin local Kafka CA")
    key, cert = server_certificate(ca_key, ca, names, "Tocsin local Kafka broker")
    ca_pem = ca.public_bytes(serialization.Encoding.PEM).decode()
    ca_file = directory / "ca.pem"
    ca_file.write_text(ca_pem, encoding="utf-8")
    return BrokerTls(
        ca_file, cert.public_bytes(serialization.Encoding.PEM).decode() + ca_pem, private_pem(key).decode()
    )
