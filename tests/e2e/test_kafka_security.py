"""Kafka over SASL_SSL end to end (issue 19, item 1): the local broker's client listener speaks TLS
with a certificate from a CA made for it and takes SCRAM logins only; the real API, worker and CLI
reach it with the variables the README's "Managed Kafka" section gives, and publish → decision →
webhook works over it. A wrong password or a broker certificate that the configured CA did not sign
stops the API, the worker and ``tocsin kafka-check`` at start: exit code 1, one ``tocsin:`` line
saying what is wrong, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.domain.delivery.webhooks import new_secret
from devstack.kafka import LocalKafka
from tests.support.receiver import webhook_receiver
from tests.support.scaling import decision_lines, stop_checked
from tests.support.stack import ROOT, Stack, kafka_client_env, wait_for
from tests.support.tls_server import TestCA
from tests.support.workflows import actual_workflow

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

USER, PASSWORD = "tocsin-app", "kafka-s3cret-pw"


# Every command line the broker's start ran (the storage format, the JVM): see secure_kafka.
LAUNCHED: list[list[str]] = []


@pytest.fixture(scope="module")
def secure_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafka]:
    """A broker whose client listener is SASL_SSL (SCRAM users, self-made CA); stopped after the module."""
    broker = LocalKafka(tmp_path_factory.mktemp("kafka-sasl"), scram_users={USER: PASSWORD, "other": "other-pw"})
    real_popen = subprocess.Popen

    def recording_popen(args: Any, *rest: Any, **kwargs: Any) -> Any:
        LAUNCHED.append([str(a) for a in args])
        return real_popen(args, *rest, **kwargs)

    with pytest.MonkeyPatch.context() as patch:  # subprocess.run starts its process with Popen too
        patch.setattr(subprocess, "Popen", recording_popen)
        broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def secure_stack(secure_kafka: LocalKafka, tmp_path: Path) -> Iterator[Callable[..., Stack]]:
    """Stacks on the SASL_SSL broker, stopped after the test, with stack_factory's checks (no record
    lost, no ERROR line in a worker's log)."""
    stacks: list[Stack] = []

    def make(**overrides: str | None) -> Stack:
        env = {"TOCSIN_ALLOW_PRIVATE_NETWORKS": "true", **kafka_client_env(secure_kafka, **overrides)}
        stack = Stack(tmp_path / f"stack{len(stacks)}", secure_kafka.bootstrap, extra_env=env)
        stacks.append(stack)
        return stack

    yield make
    stop_checked(stacks)


def _cli(stack: Stack, *args: str, **overrides: str | None) -> subprocess.CompletedProcess[str]:
    """``tocsin ARGS`` with the stack's environment, ``overrides`` (TOCSIN_KAFKA_<name>) applied."""
    env = stack.env
    for name, value in overrides.items():
        env.pop(f"TOCSIN_KAFKA_{name}", None)
        if value is not None:
            env[f"TOCSIN_KAFKA_{name}"] = value
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_publish_decision_webhook_over_sasl_ssl(
    secure_stack: Callable[..., Stack], secure_kafka: LocalKafka, tmp_path: Path
) -> None:
    # the password from a file (a mounted secret), as the README shows
    password_file = tmp_path / "kafka-password"
    password_file.write_text(PASSWORD + "\n")
    stack = secure_stack(SASL_PASSWORD=None, SASL_PASSWORD_FILE=str(password_file))
    # the only address any process is given is the SASL_SSL listener: a PLAINTEXT client gets nowhere
    assert stack.env["TOCSIN_KAFKA_BOOTSTRAP"] == secure_kafka.bootstrap
    assert stack.env["TOCSIN_KAFKA_SECURITY_PROTOCOL"] == "SASL_SSL"
    unsecured = {name: None for name in ("SSL_CA_FILE", "SASL_MECHANISM", "SASL_USERNAME", "SASL_PASSWORD_FILE")}
    plain = _cli(stack, "kafka-check", SECURITY_PROTOCOL="PLAINTEXT", **unsecured)
    assert plain.returncode == 1 and "no Kafka broker" in plain.stderr, plain.stdout + plain.stderr

    stack.start()
    # tocsin kafka-check, as an operator runs it: the broker, and every topic the API created at start
    checked = _cli(stack, "kafka-check")
    assert checked.returncode == 0, checked.stderr
    found = json.loads(checked.stdout.strip().splitlines()[-1])
    assert found["security_protocol"] == "SASL_SSL"
    assert found["sasl_mechanism"] == "SCRAM-SHA-256"
    assert found["brokers"] == [secure_kafka.bootstrap]
    assert found["topics_missing"] == [] and found["topics_present"] > 0

    with webhook_receiver() as (got, base), stack.client() as client:
        topic = client.post("/workflow_topics", json={"key": "quake", "name_en": "Quake"})
        assert topic.status_code == 201, topic.text
        actual_workflow(
            client, "quake", "quake hook", [{"type": "SEND_WEBHOOK", "url": f"{base}/quake", "secret": new_secret()}]
        )
        accepted = client.post(
            "/workflow_topics/quake/publish",
            json={"status": "ACTUAL", "data": {"magnitude": 6.1}, "event": {"id": "q1"}},
        )
        assert accepted.status_code == 202, accepted.text
        event_id = accepted.json()["id"]

        decisions = wait_for(lambda: decision_lines(stack.worker_logs).get(event_id), 60, "the decision")
        assert decisions == ["NOTIFY"]
        deliveries = wait_for(
            lambda: [d for d in got.snapshot() if d[2].get("event_id") == event_id], 60, "the webhook"
        )
        path, headers, body = deliveries[0]
        assert path == "/quake"
        assert headers["webhook-id"].startswith("act_")
        assert body["decision"] == "NOTIFY"

    # and SCRAM-SHA-512 works for the same user
    sha512 = _cli(stack, "kafka-check", SASL_MECHANISM="SCRAM-SHA-512")
    assert sha512.returncode == 0, sha512.stderr
    assert json.loads(sha512.stdout.strip().splitlines()[-1])["sasl_mechanism"] == "SCRAM-SHA-512"


def _assert_one_clear_line(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output, output
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("tocsin: "), output
    for part in expected:
        assert part in last, last
    # the refusal is said once, not repeated by retries or library loggers
    assert sum(1 for line in output.splitlines() if expected[0] in line) == 1, output


@pytest.mark.parametrize("command", ["api", "worker", "kafka-check"])
def test_wrong_password_stops_the_process_with_one_line(secure_stack: Callable[..., Stack], command: str) -> None:
    stack = secure_stack(SASL_PASSWORD="not-the-password")
    done = _cli(stack, command)
    _assert_one_clear_line(done, f"refused the SASL SCRAM-SHA-256 login of user '{USER}'", "TOCSIN_KAFKA_SASL_USERNAME")


@pytest.mark.parametrize("command", ["api", "worker", "kafka-check"])
def test_untrusted_broker_certificate_stops_the_process_with_one_line(
    secure_stack: Callable[..., Stack], tmp_path: Path, command: str
) -> None:
    other_ca = TestCA(tmp_path / "other-ca")  # a CA that did not sign the broker's certificate
    stack = secure_stack(SSL_CA_FILE=str(other_ca.ca_file))
    done = _cli(stack, command)
    _assert_one_clear_line(done, "TLS certificate is not trusted", str(other_ca.ca_file))


@pytest.mark.parametrize(
    ("listener", "client", "expected"),
    [
        ("plaintext", {"SECURITY_PROTOCOL": "SASL_SSL"}, "closed the connection during the TLS handshake"),
        ("plaintext", {"SECURITY_PROTOCOL": "SASL_PLAINTEXT", "SSL_CA_FILE": None}, "takes no SASL login"),
        (
            "sasl_ssl",
            {"SECURITY_PROTOCOL": "SSL", "SASL_MECHANISM": None, "SASL_USERNAME": None, "SASL_PASSWORD": None},
            "accepted the TLS connection but closed it at the first request",
        ),
    ],
)
def test_a_listener_speaking_another_protocol_is_named(
    secure_stack: Callable[..., Stack],
    secure_kafka: LocalKafka,
    request: pytest.FixtureRequest,
    listener: str,
    client: dict[str, str | None],
    expected: str,
) -> None:
    """The client's protocol is not the listener's: one line saying so, not a wait for a broker that
    answers. A PLAINTEXT listener is the session's broker's (the SASL one has none)."""
    broker: LocalKafka = request.getfixturevalue("kafka") if listener == "plaintext" else secure_kafka
    stack = secure_stack(BOOTSTRAP=broker.bootstrap, **client)
    done = _cli(stack, "kafka-check")
    _assert_one_clear_line(done, expected, broker.bootstrap)


def _listening_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on (its sockets in /proc/<pid>/net/tcp in state LISTEN)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd)
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rpartition(":")[2], 16))
    return ports


_PROBE = """
import asyncio, ssl, sys
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

async def probe(address, cafile):
    security = {"security_protocol": "SSL", "ssl_context": ssl.create_default_context(cafile=cafile)} if cafile else {}
    admin = AIOKafkaAdminClient(bootstrap_servers=address, request_timeout_ms=3000, **security)
    try:
        await asyncio.wait_for(admin.start(), 15)
        await asyncio.wait_for(admin.describe_cluster(), 15)
        return "answered"
    except (KafkaError, OSError, TimeoutError) as e:
        return "refused: " + type(e).__name__
    finally:
        await admin.close()

print(asyncio.run(probe(sys.argv[1], sys.argv[2])), flush=True)
"""


def _answers_without_login(address: str, cafile: str = "") -> bool:
    """Whether a client that does not log in gets the cluster's metadata at ``address`` (over TLS
    trusting ``cafile`` when given). Each probe runs in its own interpreter: a listener that drops
    a TLS client mid-handshake leaves aiokafka's SSL transport shutting down after ``close()``, and
    the event loop then refuses to close (uvloop: ``OSError: [Errno 16] Device or resource busy``)
    or warns of the unclosed transport, which fails the test for a reason that is not the
    broker's. The probe's verdict is its first line of output, printed before its loop closes."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, address, cafile], capture_output=True, text=True, timeout=60, check=False
    )
    verdict = done.stdout.splitlines()[0] if done.stdout else ""
    assert verdict == "answered" or verdict.startswith("refused: "), (done.returncode, done.stdout, done.stderr)
    return verdict == "answered"


def test_no_listener_of_the_sasl_broker_takes_a_client_that_does_not_log_in(secure_kafka: LocalKafka) -> None:
    """Issue 30, item 3: the rehearsal broker listened on a PLAINTEXT port beside the SASL_SSL one
    (between brokers, and for its readiness probe), where any local process read every topic
    without a login. Every port its JVM listens on is tried, without TLS and with TLS but no SASL.
    Before the fix the PLAINTEXT port answered."""
    assert secure_kafka.pid is not None
    ports = _listening_ports(secure_kafka.pid)
    assert secure_kafka.port in ports and secure_kafka.controller_port in ports, ports
    answered = [
        (port, protocol)
        for port in sorted(ports)
        for protocol, cafile in (("PLAINTEXT", ""), ("SSL", str(secure_kafka.ca_file)))
        if _answers_without_login(f"{secure_kafka.host}:{port}", cafile)
    ]
    assert answered == [], f"listeners that serve a client without a login: {answered}"


def test_no_command_line_of_the_sasl_broker_shows_a_password(secure_kafka: LocalKafka) -> None:
    """Issue 30, item 3: the SCRAM passwords went to the storage format as arguments, readable by
    every local user in /proc/<pid>/cmdline (``ps``) while it ran. No command line the broker's
    start ran, nor of any process running now, holds one of them. Before the fix the format's did."""
    secrets = list(secure_kafka.scram_users.values())
    assert LAUNCHED, "the broker's start ran no process: the fixture recorded nothing"
    shown = [argv for argv in LAUNCHED if any(secret in " ".join(argv) for secret in secrets)]
    assert shown == [], f"command lines with a SCRAM password: {shown}"
    running = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().decode(errors="replace")
        except OSError:  # the process ended meanwhile
            continue
        if any(secret in text for secret in secrets):
            running.append(cmdline.parent.name)
    assert running == [], f"processes whose command line holds a SCRAM password: {running}"
