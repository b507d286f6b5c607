"""``TOCSIN_KAFKA_*`` security: TLS and SASL towards the brokers, checked as one group at start.

The group validates itself (protocol, files, credentials that contradict each other) and builds the
TLS context; app/kafka/security.py turns it into every Kafka client's arguments. SSL and SASL_SSL
verify the broker's certificate and host name against the CA file (unset: the system's CAs); a client
certificate (with its key, unless the file holds both) for brokers that require one. SASL_* need a
mechanism, a user name and a password (or a file holding it).
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SSL_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})
SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})
PREFIX = "TOCSIN_KAFKA_"


class KafkaSecurity(BaseSettings):
    """TLS and SASL of every Kafka client of the API, the worker and the CLI (guides: Managed Kafka)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore")

    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        default="PLAINTEXT",
        description=("Kafka's security.protocol towards the brokers, for every Kafka client (guides: Managed Kafka)"),
    )
    ssl_ca_file: Path | None = Field(
        default=None,
        description=(
            "PEM file of the CA(s) that sign the brokers' certificates; unset: the system's "
            "CAs (host names are always verified)"
        ),
    )
    ssl_cert_file: Path | None = Field(default=None, description="a client certificate (mutual TLS), PEM")
    ssl_key_file: Path | None = Field(
        default=None, description="the client certificate's key, PEM (it may sit in the certificate file)"
    )
    ssl_key_password: SecretStr | None = Field(
        default=None, description="the client key's password, if it is encrypted"
    )
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = Field(
        default=None, description="the SASL mechanism; required with SASL_PLAINTEXT and SASL_SSL"
    )
    sasl_username: str | None = Field(default=None, description="the SASL user (Confluent Cloud: the API key)")
    sasl_password: SecretStr | None = Field(
        default=None,
        description=("the SASL password (Confluent Cloud: the API secret); or TOCSIN_KAFKA_SASL_PASSWORD_FILE"),
    )
    sasl_password_file: Path | None = Field(
        default=None, description="a file holding the SASL password (a mounted secret; a final newline is dropped)"
    )

    @field_validator("security_protocol", "sasl_mechanism", mode="before")
    @classmethod
    def _upper_names(cls, value: object) -> object:
        return value.strip().upper() or None if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> KafkaSecurity:
        problem = self.problem()
        if problem is not None:
            raise ValueError(problem)
        return self

    @property
    def sasl_password_value(self) -> str | None:
        """The SASL password: TOCSIN_KAFKA_SASL_PASSWORD, or the file's content without its final newline."""
        if self.sasl_password is not None:
            return self.sasl_password.get_secret_value()
        if self.sasl_password_file is not None:
            return self.sasl_password_file.read_text(encoding="utf-8").rstrip("\r\n")
        return None

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context of SSL and SASL_SSL (None otherwise): verifies the broker's certificate chain
        and host name against the CA file, or the system's CAs without one; presents the client
        certificate when one is set."""
        if self.security_protocol not in SSL_PROTOCOLS:
            return None
        from aiokafka.helpers import create_ssl_context  # aiokafka's public helper, loaded only for TLS

        password = self.ssl_key_password
        context: ssl.SSLContext = create_ssl_context(
            cafile=self.ssl_ca_file,
            certfile=self.ssl_cert_file,
            keyfile=self.ssl_key_file,
            password=password.get_secret_value() if password is not None else None,
        )
        return context

    def problem(self) -> str | None:
        """What is wrong with these settings (one sentence naming the variables), or None."""
        protocol = self.security_protocol
        tls = ("ssl_ca_file", "ssl_cert_file", "ssl_key_file", "ssl_key_password")
        sasl = ("sasl_mechanism", "sasl_username", "sasl_password", "sasl_password_file")
        set_tls = [variable(name) for name in tls if getattr(self, name) is not None]
        set_sasl = [variable(name) for name in sasl if getattr(self, name) is not None]
        where = f"TOCSIN_KAFKA_SECURITY_PROTOCOL={protocol}"
        if protocol not in SSL_PROTOCOLS and set_tls:
            return f"{', '.join(set_tls)} set, but TLS is off with {where} (use SSL or SASL_SSL)"
        if protocol not in SASL_PROTOCOLS and set_sasl:
            return f"{', '.join(set_sasl)} set, but SASL is off with {where} (use SASL_PLAINTEXT or SASL_SSL)"
        if protocol in SASL_PROTOCOLS:
            if self.sasl_mechanism is None:
                return f"{where} needs TOCSIN_KAFKA_SASL_MECHANISM (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)"
            if not self.sasl_username:
                return f"{where} needs TOCSIN_KAFKA_SASL_USERNAME"
            if (self.sasl_password is None) == (self.sasl_password_file is None):
                return f"{where} needs one of TOCSIN_KAFKA_SASL_PASSWORD or TOCSIN_KAFKA_SASL_PASSWORD_FILE"
            if problem := _readable_file("TOCSIN_KAFKA_SASL_PASSWORD_FILE", self.sasl_password_file):
                return problem
            if not self.sasl_password_value:
                return "the Kafka SASL password is empty (TOCSIN_KAFKA_SASL_PASSWORD or its _FILE)"
        if protocol in SSL_PROTOCOLS:
            if self.ssl_key_file is not None and self.ssl_cert_file is None:
                return "TOCSIN_KAFKA_SSL_KEY_FILE needs TOCSIN_KAFKA_SSL_CERT_FILE (the client certificate)"
            if self.ssl_key_password is not None and self.ssl_cert_file is None:
                return "TOCSIN_KAFKA_SSL_KEY_PASSWORD needs TOCSIN_KAFKA_SSL_CERT_FILE (the client certificate)"
            for name in ("ssl_ca_file", "ssl_cert_file", "ssl_key_file"):
                if problem := _readable_file(variable(name), getattr(self, name)):
                    return problem
            try:
                self.ssl_context()
            except ssl.SSLError as exc:
                return f"the Kafka TLS files cannot be used: {ssl_reason(exc)} ({self.tls_files()})"
        return None

    def tls_files(self) -> str:
        """The TLS files set, as ``TOCSIN_KAFKA_SSL_…=path`` for a message."""
        names = ("ssl_ca_file", "ssl_cert_file", "ssl_key_file")
        return ", ".join(f"{variable(n)}={getattr(self, n)}" for n in names if getattr(self, n) is not None)


def variable(name: str) -> str:
    """The environment variable of the field ``name``."""
    return f"{PREFIX}{name.upper()}"


def ssl_reason(exc: ssl.SSLError) -> str:
    """An OpenSSL failure in words (``CERTIFICATE_VERIFY_FAILED`` → ``certificate verify failed``)."""
    return str(exc.reason or exc.strerror or exc).replace("_", " ").lower()


def _readable_file(name: str, path: os.PathLike[str] | None) -> str | None:
    if path is None:
        return None
    if not os.path.isfile(path):
        return f"{name}: no such file {os.fspath(path)!r}"
    if not os.access(path, os.R_OK):
        return f"{name}: {os.fspath(path)!r} is not readable by this process"
    return None
