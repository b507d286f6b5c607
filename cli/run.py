"""``tocsin run`` (what ``make run`` calls): the local broker and SMTP sink (devstack/), migrations,
bootstrap on first start, API and worker; Ctrl-C stops them all. An API or worker that exits is
started again (its state is in the database, Kafka and its data directory); one that exits more
than ``RESTARTS_PER_MINUTE`` times in a minute stops everything.

With ``tocsin kafka``, the one command that starts development infrastructure (devstack/): only cli/
imports it (pyproject.toml's contracts)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping

import httpx

from app.settings import Settings
from cli.bootstrap import bootstrap_organization, console_base
from cli.common import say, signing_keys
from cli.kafka import local_kafka
from cli.migrate import cmd_migrate

RESTARTS_PER_MINUTE = 5


class Supervisor:
    """The API and the worker: each started by ``start(role)``; :meth:`check` starts again one that exited."""

    def __init__(
        self, start: Callable[[str], subprocess.Popen[bytes]], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.start, self.clock = start, clock
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.exits: dict[str, deque[float]] = {}

    def launch(self, role: str) -> None:
        self.procs[role] = self.start(role)

    def check(self) -> str | None:
        """Start again every process that exited; the role of one that exits too often (then
        nothing is restarted and the caller stops everything), else None."""
        for role, proc in list(self.procs.items()):
            code = proc.poll()
            if code is None:
                continue
            now = self.clock()
            recent = self.exits.setdefault(role, deque())
            recent.append(now)
            while now - recent[0] > 60:
                recent.popleft()
            if len(recent) > RESTARTS_PER_MINUTE:
                return role
            say(f"the {role} exited with code {code}; starting it again")
            self.launch(role)
        return None


def _wait_ready(url: str, procs: list[subprocess.Popen[bytes]], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise SystemExit(f"tocsin: {proc.args!r} exited with {proc.returncode} during start")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass  # not listening yet: poll again until the deadline
        time.sleep(0.2)
    raise SystemExit(f"tocsin: {url} not ready after {timeout:.0f}s")


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# An API listening on every address is reached on loopback here
_UNSPECIFIED_HOSTS = ("", "0.0.0.0", "::")


def process_env(settings: Settings, environ: Mapping[str, str]) -> dict[str, str]:
    """The API's and the worker's environment: ``environ``, this run's data directory, and its public
    URL (TOCSIN_PUBLIC_URL, which they require): the one set, else the API's loopback address, by the
    name ``localhost`` when it listens on 127.0.0.1 or everywhere: the address the run prints for the
    console (cli/bootstrap.py), so the links the API e-mails and its session cookie are on the host
    the browser opened, and a browser takes it as a WebAuthn relying party (an IP address it refuses)."""
    host = "localhost" if settings.api_host in (*_UNSPECIFIED_HOSTS, "127.0.0.1") else settings.api_host
    loopback = f"http://{f'[{host}]' if ':' in host else host}:{settings.api_port}"
    return {
        **environ,
        "TOCSIN_VAR_DIR": str(settings.var_dir.resolve()),
        "TOCSIN_PUBLIC_URL": settings.public_url or loopback,
    }


def cmd_run(settings: Settings, org_name: str) -> None:
    """Broker, migrations, bootstrap on first start, API and worker; Ctrl-C stops them all."""
    from devstack.kafka import LocalKafka
    from devstack.smtp_sink import SmtpSink

    if settings.kafka_security.security_protocol != "PLAINTEXT":
        raise SystemExit(
            f"tocsin: `tocsin run` starts its own PLAINTEXT broker, but TOCSIN_KAFKA_SECURITY_PROTOCOL="
            f"{settings.kafka_security.security_protocol}: unset it, or start the broker (tocsin kafka --scram-user "
            "NAME:PASSWORD) and tocsin api and tocsin worker yourself (docs/guides/managed-kafka.md)"
        )
    kafka = local_kafka(settings)
    assert isinstance(kafka, LocalKafka)
    mail_dir = settings.var_dir.resolve() / "mail"
    sink = SmtpSink(mail_dir, settings.smtp.host, settings.smtp.port)
    stopping = False
    env = process_env(settings, os.environ)
    supervisor = Supervisor(lambda role: subprocess.Popen([sys.executable, "-m", "cli", role], env=env))
    signing_keys(settings)  # created once here, before the API replicas that read it start

    def on_signal(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        kafka.start()
        sink.start()
        say(f"SMTP sink on {settings.smtp.host}:{settings.smtp.port}, mail kept in {mail_dir}")
        cmd_migrate(settings)
        created = asyncio.run(bootstrap_organization(settings, org_name, only_if_empty=True))
        # Webhooks to a local receiver need an explicit, narrow allowance (never private networks):
        # TOCSIN_LOOPBACK_TARGETS=127.0.0.1:9000 (docs/reference/configuration.md).
        if settings.outbound.loopback_targets:
            say(f"webhooks may reach the loopback receivers {', '.join(settings.outbound.loopback_targets)} over http")
        say(f"public URL {env['TOCSIN_PUBLIC_URL']} (TOCSIN_PUBLIC_URL): federated credentials' default audience")
        for role in ("api", "worker"):
            say(f"starting {role}")
            supervisor.launch(role)
        base = f"http://{settings.api_host}:{settings.api_port}"
        _wait_ready(f"{base}/readyz", list(supervisor.procs.values()), timeout=120)
        if created is not None:
            print(json.dumps(created), flush=True)
            owner, link = created["owner_email"], created["owner_signin_link"]
            say(f"the owner ({owner}) chooses a password and signs in at {link}")
        else:
            say("database already bootstrapped (tocsin bootstrap --org NAME makes another organization)")
        console = f"{console_base(settings)}/console"
        say(f"ready: API on {base} (docs {base}/docs), console on {console}, worker running; Ctrl-C stops everything")
        while not stopping:
            if (failing := supervisor.check()) is not None:
                say(f"the {failing} exited {RESTARTS_PER_MINUTE + 1} times within a minute; stopping the rest")
                break
            time.sleep(0.3)
    finally:
        say("stopping")
        _stop(list(supervisor.procs.values()))
        sink.stop()
        kafka.stop()
        say("stopped")
