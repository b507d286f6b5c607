"""The Kafka security settings (app/settings/kafka_security.py) and the client arguments built from them
(app/kafka/security.py): refused with a message naming the variables, and the same TLS and SASL
arguments for aiokafka's clients and for Faust's."""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import faust
import pytest
from cryptography.hazmat.primitives import serialization
from faust.transport.drivers.aiokafka import credentials_to_aiokafka_auth
from pydantic import ValidationError

from app.kafka.security import client_args, faust_credentials, security_args
from app.settings import Settings
from app.settings.kafka_security import KafkaSecurity
from tables.kafka_access import check_access
from tests.support.stack import ROOT
from tests.support.tls_server import TestCA


@pytest.fixture(autouse=True)
def _no_kafka_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("TOCSIN_KAFKA_"):
            monkeypatch.delenv(name)


@pytest.fixture
def ca(tmp_path: Path) -> TestCA:
    return TestCA(tmp_path / "ca")


def sasl(**more: Any) -> dict[str, Any]:
    return {
        "kafka_security_protocol": "SASL_SSL",
        "kafka_sasl_mechanism": "SCRAM-SHA-512",
        "kafka_sasl_username": "tocsin",
        "kafka_sasl_password": "pw",
        **more,
    }


def kafka_settings(**values: Any) -> Settings:
    """Settings with these ``kafka_*`` values (each the TOCSIN_ variable of that name, lower case)."""
    bootstrap = {"kafka_bootstrap": values.pop("kafka_bootstrap")} if "kafka_bootstrap" in values else {}
    security = KafkaSecurity(**{name.removeprefix("kafka_"): value for name, value in values.items()})
    return Settings(kafka_security=security, **bootstrap)


def refused(**values: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        kafka_settings(**values)
    return str(caught.value)


def test_plaintext_is_the_default_and_adds_nothing() -> None:
    settings = kafka_settings(kafka_bootstrap="b1:9092,b2:9092")
    assert client_args(settings) == {"bootstrap_servers": "b1:9092,b2:9092", "security_protocol": "PLAINTEXT"}
    assert faust_credentials(settings) is None


def test_names_are_case_insensitive() -> None:
    settings = kafka_settings(**sasl(kafka_security_protocol="sasl_ssl", kafka_sasl_mechanism="scram-sha-256"))
    assert (settings.kafka_security.security_protocol, settings.kafka_security.sasl_mechanism) == (
        "SASL_SSL",
        "SCRAM-SHA-256",
    )


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"kafka_security_protocol": "KERBEROS"}, "Input should be 'PLAINTEXT', 'SSL', 'SASL_PLAINTEXT' or 'SASL_SSL'"),
        (sasl(kafka_sasl_mechanism="GSSAPI"), "Input should be 'PLAIN', 'SCRAM-SHA-256' or 'SCRAM-SHA-512'"),
        (
            sasl(kafka_sasl_mechanism=None),
            "TOCSIN_KAFKA_SECURITY_PROTOCOL=SASL_SSL needs TOCSIN_KAFKA_SASL_MECHANISM (PLAIN, SCRAM-SHA-256 or",
        ),
        (sasl(kafka_sasl_username=None), "TOCSIN_KAFKA_SECURITY_PROTOCOL=SASL_SSL needs TOCSIN_KAFKA_SASL_USERNAME"),
        (
            sasl(kafka_security_protocol="SASL_PLAINTEXT", kafka_sasl_password=None),
            "SASL_PLAINTEXT needs one of TOCSIN_KAFKA_SASL_PASSWORD or TOCSIN_KAFKA_SASL_PASSWORD_FILE",
        ),
        (
            sasl(kafka_sasl_password_file="/etc/hosts"),
            "needs one of TOCSIN_KAFKA_SASL_PASSWORD or TOCSIN_KAFKA_SASL_PASSWORD_FILE",
        ),
        (sasl(kafka_sasl_password=None, kafka_sasl_password_file="/nonexistent/pw"), "no such file '/nonexistent/pw'"),
        (
            {"kafka_sasl_username": "tocsin", "kafka_sasl_password": "pw"},
            "TOCSIN_KAFKA_SASL_USERNAME, TOCSIN_KAFKA_SASL_PASSWORD set, but SASL is off with "
            "TOCSIN_KAFKA_SECURITY_PROTOCOL=PLAINTEXT (use SASL_PLAINTEXT or SASL_SSL)",
        ),
        (
            {"kafka_security_protocol": "SASL_PLAINTEXT", "kafka_ssl_ca_file": "/etc/hosts"},
            "TOCSIN_KAFKA_SSL_CA_FILE set, but TLS is off with TOCSIN_KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT",
        ),
        (
            {"kafka_security_protocol": "SSL", "kafka_ssl_ca_file": "/nonexistent/ca.pem"},
            "TOCSIN_KAFKA_SSL_CA_FILE: no such file '/nonexistent/ca.pem'",
        ),
        (
            {"kafka_security_protocol": "SSL", "kafka_ssl_key_file": "/etc/hosts"},
            "TOCSIN_KAFKA_SSL_KEY_FILE needs TOCSIN_KAFKA_SSL_CERT_FILE",
        ),
    ],
)
def test_refused_with_the_variables_named(values: dict[str, Any], message: str) -> None:
    assert message in refused(**values)


def test_empty_password_file_refused(tmp_path: Path) -> None:
    empty = tmp_path / "pw"
    empty.write_text("\n")
    assert "the Kafka SASL password is empty" in refused(
        **sasl(kafka_sasl_password=None, kafka_sasl_password_file=empty)
    )


def test_files_that_are_no_certificates_refused(tmp_path: Path, ca: TestCA) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    message = refused(kafka_security_protocol="SSL", kafka_ssl_ca_file=junk)
    assert "the Kafka TLS files cannot be used" in message and f"TOCSIN_KAFKA_SSL_CA_FILE={junk}" in message
    cert, _key = ca.issue(stem="client")
    other_key = TestCA(tmp_path / "other").issue(stem="other")[1]
    message = refused(kafka_security_protocol="SSL", kafka_ssl_cert_file=cert, kafka_ssl_key_file=other_key)
    assert "the Kafka TLS files cannot be used" in message and f"TOCSIN_KAFKA_SSL_KEY_FILE={other_key}" in message


def test_sasl_ssl_arguments(tmp_path: Path, ca: TestCA) -> None:
    password_file = tmp_path / "pw"
    password_file.write_text("from-a-file\n")
    settings = kafka_settings(
        **sasl(kafka_sasl_password=None, kafka_sasl_password_file=password_file, kafka_ssl_ca_file=ca.ca_file)
    )
    args = security_args(settings)
    context = args.pop("ssl_context")
    assert args == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "tocsin",
        "sasl_plain_password": "from-a-file",
    }
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert len(context.get_ca_certs()) == 1  # the CA file's, not the system's


def test_ssl_with_a_client_certificate_and_an_encrypted_key(tmp_path: Path, ca: TestCA) -> None:
    cert, key_file = ca.issue(stem="client")
    key = serialization.load_pem_private_key(key_file.read_bytes(), None)
    encrypted = tmp_path / "client-key.pem"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"key-pw"),
        )
    )
    base = {"kafka_security_protocol": "SSL", "kafka_ssl_cert_file": cert, "kafka_ssl_key_file": encrypted}
    settings = kafka_settings(**base, kafka_ssl_key_password="key-pw")
    assert isinstance(security_args(settings)["ssl_context"], ssl.SSLContext)
    assert "the Kafka TLS files cannot be used" in refused(**base, kafka_ssl_key_password="wrong")


@pytest.mark.parametrize("protocol", ["SSL", "SASL_PLAINTEXT", "SASL_SSL"])
def test_faust_gets_the_same_arguments_as_aiokafka(protocol: str, ca: TestCA) -> None:
    values: dict[str, Any] = sasl(kafka_security_protocol=protocol) if protocol.startswith("SASL") else {}
    if protocol.endswith("SSL"):
        values |= {"kafka_security_protocol": protocol, "kafka_ssl_ca_file": ca.ca_file}
    settings = kafka_settings(**values)
    credentials = faust_credentials(settings)
    expected_type = faust.SSLCredentials if protocol == "SSL" else faust.SASLCredentials
    assert isinstance(credentials, expected_type)
    # what Faust hands its consumers and producers (faust's own conversion)
    faust_args = dict(credentials_to_aiokafka_auth(credentials))
    ours = security_args(settings)
    assert (faust_args.pop("ssl_context") is None) == (ours.pop("ssl_context", None) is None)
    assert faust_args == ours


def test_check_access_leaves_an_unreachable_broker_to_the_callers_wait(ca: TestCA) -> None:
    settings = kafka_settings(**sasl(kafka_bootstrap="127.0.0.1:1", kafka_ssl_ca_file=ca.ca_file))
    asyncio.run(check_access(settings))  # no KafkaAccessError: nothing refused anything


def test_cli_names_the_variable_in_one_line() -> None:
    env = {**os.environ, "TOCSIN_KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "TOCSIN_KAFKA_SASL_MECHANISM": "PLAIN"}
    done = subprocess.run(
        [sys.executable, "-m", "cli", "kafka-check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "tocsin: configuration refused: TOCSIN_KAFKA_SECURITY_PROTOCOL=SASL_SSL needs TOCSIN_KAFKA_SASL_USERNAME"
    )


def test_every_kafka_client_of_the_product_is_built_with_the_security_arguments() -> None:
    """Each aiokafka client built in app/, api/, streams/ and tables/ takes ``**client_args(...)``,
    and the Faust app its ``broker_credentials``: a client added without them would talk PLAINTEXT
    to a managed Kafka."""
    import ast

    clients = {"AIOKafkaProducer", "AIOKafkaConsumer", "AIOKafkaAdminClient", "AIOKafkaClient"}
    built, missing = [], []
    for package in ("app", "api", "streams", "tables", "cli"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Call):
                    continue
                name = ast.unparse(node.func).rpartition(".")[2]
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                if name in clients:
                    built.append(where)
                    spread = [ast.unparse(k.value) for k in node.keywords if k.arg is None]
                    if not any(s.startswith("client_args(") for s in spread):
                        missing.append(where)
                elif ast.unparse(node.func) == "faust.App":
                    built.append(where)
                    if "broker_credentials" not in {k.arg for k in node.keywords}:
                        missing.append(where)
    assert len(built) >= 7, built  # the API's two producers, the worker's app and clients, admin, CLI
    assert missing == [], missing


def test_tocsin_run_refuses_security_settings_for_its_plaintext_broker(tmp_path: Path) -> None:
    env = {**os.environ, "TOCSIN_VAR_DIR": str(tmp_path), "TOCSIN_KAFKA_SECURITY_PROTOCOL": "SSL"}
    done = subprocess.run(
        [sys.executable, "-m", "cli", "run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.startswith("tocsin: `tocsin run` starts its own PLAINTEXT broker, but ")
    assert not (tmp_path / "kafka").exists()  # refused before starting anything
