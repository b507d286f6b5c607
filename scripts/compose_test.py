#!/usr/bin/env python3
"""`make compose-test`: the compose deployment (docker-compose.yml), brought up and used for real.

1. scripts/container-engine.sh up: docker.io, docker-compose and debootstrap installed if missing,
   dockerd started if none answers, the base image built with debootstrap unless it exists;
2. secrets made in a scratch directory (scripts/compose-secrets.sh), `docker-compose build`, `up -d`
   under the project name tocsin-compose-test on the test's own ports (TOCSIN_COMPOSE_*_PORT);
3. waits (with a deadline) for every long-running service to be healthy and both one-shots to exit 0;
4. takes the owner token from the bootstrap one-shot's output, then over real HTTP: a topic, an
   operation book and a workflow (incident + e-mail), a publish, and polls until the event's trace
   shows the decision, the incident exists and the SMTP sink got the e-mail;
5. restarts Kafka and the worker (their state is in volumes) and `up -d` again: the bootstrap
   one-shot creates no second organization, a second publish is decided and makes its incident;
6. always: `docker-compose down -v` and the scratch secrets removed, dockerd stopped if step 1
   started it. Nothing is left running.

Exit status: 0 passed, 1 failed, 3 no container engine can run here (the reason printed; CI
reports it and goes on). Only the standard library: it runs on the host's python3.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "tocsin-compose-test"
NO_ENGINE = 3
PORTS = {  # the test's own, so that it runs beside `make run` and beside a deployment on the defaults
    "TOCSIN_COMPOSE_KAFKA_PORT": 29092,
    "TOCSIN_COMPOSE_PG_PORT": 25432,
    "TOCSIN_COMPOSE_SMTP_PORT": 28025,
    "TOCSIN_COMPOSE_API_PORT": 28080,
    "TOCSIN_COMPOSE_WORKER_PORT": 26066,
}
SERVICES = ("kafka", "postgres", "smtp", "api", "worker")
ONE_SHOTS = ("migrate", "bootstrap")
T = TypeVar("T")
STARTED = time.monotonic()


class Failed(Exception):
    pass


def say(message: str) -> None:
    print(f"compose-test [{time.monotonic() - STARTED:6.1f}s] {message}", flush=True)


def run(*command: str, env: dict[str, str] | None = None, check: bool = True, quiet: bool = False) -> str:
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise Failed(f"{' '.join(command)} exited with {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    if not quiet and done.stderr.strip():
        print(done.stderr.rstrip(), flush=True)
    return done.stdout


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, every: float = 1.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise Failed(f"{what}: not within {timeout:.0f}s")
        time.sleep(every)


class Compose:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def __call__(self, *args: str, check: bool = True, quiet: bool = False) -> str:
        return run(
            "docker-compose",
            "-p",
            PROJECT,
            "-f",
            str(ROOT / "docker-compose.yml"),
            *args,
            env=self.env,
            check=check,
            quiet=quiet,
        )

    def state(self, service: str) -> dict[str, Any] | None:
        ids = self("ps", "-a", "-q", service, quiet=True).split()
        if not ids:
            return None
        state: dict[str, Any] = json.loads(run("docker", "inspect", "-f", "{{json .State}}", ids[0], quiet=True))
        return state

    def healthy(self, services: tuple[str, ...]) -> bool | None:
        for service in services:
            state = self.state(service)
            if state is None or not state.get("Running"):
                if state is not None and state.get("Status") == "exited":
                    raise Failed(f"{service} exited with {state.get('ExitCode')}")
                return None
            health = (state.get("Health") or {}).get("Status")
            if health == "unhealthy":
                raise Failed(f"{service} is unhealthy: {state['Health'].get('Log', [])[-1:]}")
            if health != "healthy":
                return None
        return True

    def exited_ok(self, service: str) -> bool | None:
        state = self.state(service)
        if state is None or state.get("Status") != "exited":
            return None
        if state.get("ExitCode") != 0:
            raise Failed(f"one-shot {service} exited with {state.get('ExitCode')}")
        return True

    def logs(self, service: str) -> str:
        return self("logs", "--no-color", service, quiet=True)


class Api:
    def __init__(self, port: int, org: str, token: str) -> None:
        self.base = f"http://127.0.0.1:{port}/v1/organizations/{org}"
        self.token = token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def expect(self, status: int, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        got, answer = self.call(method, path, body)
        if got != status:
            raise Failed(f"{method} {path}: {got} {answer}, expected {status}")
        return answer


def _json_object(line: str) -> dict[str, Any]:
    """The JSON object a log line holds, or an empty one."""
    if not line.startswith("{"):
        return {}
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def publish_and_check(api: Api, compose: Compose, event_id: str, name: str, incidents_before: int) -> None:
    evt = api.expect(
        202,
        "POST",
        "/workflow_topics/quake/publish",
        {"status": "ACTUAL", "data": {"magnitude": 6.1}, "event": {"id": event_id, "name": name}},
    )["id"]
    say(f"published {event_id}: 202 {evt}")

    def trace() -> dict[str, Any] | None:
        status, body = api.call("GET", f"/events/{evt}")
        if status == 404:
            return None
        if status != 200:
            raise Failed(f"GET /events/{evt}: {status} {body}")
        kinds = {step["step"].split(":")[0] for step in body["steps"]}
        return body if {"control", "action", "delivery"} <= kinds else None

    steps = wait_for(f"the trace of {evt} with its decision, incident and e-mail", trace, 90)["steps"]
    control = next(step for step in steps if step["step"] == "control")
    if control["decision"] != "NOTIFY":
        raise Failed(f"decision {control}, expected NOTIFY")
    delivery = next(step for step in steps if step["step"].startswith("delivery:"))
    if delivery["kind"] != "EMAIL" or delivery["outcome"] != "DELIVERED":
        raise Failed(f"e-mail delivery {delivery}")
    say(f"decided: policy={control['policy']} decision={control['decision']}; e-mail {delivery['outcome']}")
    items = api.expect(200, "GET", "/incidents")["items"]
    mine = [item for item in items if item["server_event_id"] == evt]
    if len(mine) != 1 or mine[0]["title"] != f"Quake: {name}" or len(items) != incidents_before + 1:
        raise Failed(f"incidents: {items}")
    say(f"incident {mine[0]['id']} {mine[0]['title']!r} {mine[0]['status']}")
    wanted = f"mail to ops@example.com: 'Quake: {name}'"
    wait_for("the SMTP sink's line for the e-mail", lambda: True if wanted in compose.logs("smtp") else None, 30)
    say(f"SMTP sink: {wanted}")


def exercise(compose: Compose) -> None:
    started = time.monotonic()
    compose("build")
    say(f"images built in {time.monotonic() - started:.1f}s")
    started = time.monotonic()
    compose("up", "-d")
    wait_for("every service healthy", lambda: compose.healthy(SERVICES), 480, every=2)
    for one_shot in ONE_SHOTS:
        wait_for(f"{one_shot} exited 0", functools.partial(compose.exited_ok, one_shot), 60)
    say(f"up and healthy in {time.monotonic() - started:.1f}s: {', '.join(SERVICES)}; one-shots exited 0")

    lines = [line.partition("|")[2].strip() for line in compose.logs("bootstrap").splitlines()]
    # its log lines (migrations, the CLI's own) are JSON too, on stderr: the credentials are the
    # one object with an access token
    created = [record for record in map(_json_object, lines) if "access_token" in record]
    if len(created) != 1:
        raise Failed(f"the bootstrap one-shot printed {len(created)} credentials lines: {lines}")
    org, token = created[0]["organization_id"], created[0]["access_token"]
    say(f"bootstrap printed organization {org} and a token {token[:8]}…")

    api = Api(PORTS["TOCSIN_COMPOSE_API_PORT"], org, token)
    api.expect(201, "POST", "/workflow_topics", {"key": "quake", "name_en": "Earthquake"})
    book = api.expect(
        201, "POST", "/operation_books", {"name": "Quake response", "incident_title_template": "Quake: {event.name}"}
    )["id"]
    api.expect(
        201,
        "POST",
        "/workflows",
        {
            "name": "Quake alert",
            "topic": "quake",
            "mode": "ACTUAL",
            "actions": [
                {"type": "RUN_OPERATION_BOOK", "operation_book_id": book},
                {
                    "type": "SEND_EMAIL",
                    "to": ["ops@example.com"],
                    "subject": "Quake: {event.name}",
                    "body": "{decision}",
                },
            ],
        },
    )
    publish_and_check(api, compose, "jma-2026-1", "M6.1 off Miyagi", incidents_before=0)

    started = time.monotonic()
    compose("restart", "kafka", "worker")
    compose("up", "-d")  # runs the one-shots again
    wait_for("every service healthy after the restart", lambda: compose.healthy(SERVICES), 480, every=2)
    wait_for("bootstrap exited 0 again", lambda: compose.exited_ok("bootstrap"), 60)
    again = compose.logs("bootstrap")
    if again.count('"access_token"') != 1 or "an organization exists already" not in again:
        raise Failed(f"the second bootstrap run: {again}")
    say(
        f"Kafka and the worker restarted on their volumes, healthy in {time.monotonic() - started:.1f}s; "
        "the bootstrap one-shot ran again and created nothing"
    )
    publish_and_check(api, compose, "jma-2026-2", "M5.2 off Fukushima", incidents_before=1)


def ports_free() -> None:
    taken = []
    for name, port in PORTS.items():
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                taken.append(f"{port} ({name})")
    if taken:
        raise Failed(f"ports in use, the test needs them: {', '.join(taken)}")


def main() -> int:
    engine = subprocess.run([str(ROOT / "scripts/container-engine.sh"), "up"], cwd=ROOT, check=False)
    if engine.returncode == NO_ENGINE:
        say("no container engine can run here (the reason is above); the compose test did not run")
        return NO_ENGINE
    try:
        if engine.returncode != 0:
            raise Failed(f"scripts/container-engine.sh up exited with {engine.returncode}")
        say(f"engine ready in {time.monotonic() - STARTED:.1f}s")
        return with_engine()
    except Failed as exc:
        say(f"FAILED: {exc}")
        return 1
    finally:
        subprocess.run([str(ROOT / "scripts/container-engine.sh"), "down"], cwd=ROOT, check=False)


def with_engine() -> int:
    secrets = Path(tempfile.mkdtemp(prefix="tocsin-compose-secrets-"))
    env = {**os.environ, "TOCSIN_COMPOSE_SECRETS": str(secrets), **{k: str(v) for k, v in PORTS.items()}}
    env["TOCSIN_COMPOSE_PUBLIC_URL"] = f"http://127.0.0.1:{PORTS['TOCSIN_COMPOSE_API_PORT']}"
    compose = Compose(env)
    try:
        ports_free()
        run(str(ROOT / "scripts/compose-secrets.sh"), str(secrets), quiet=True)
        try:
            exercise(compose)
        except Failed:
            print(compose("ps", check=False, quiet=True), flush=True)
            for service in (*SERVICES, *ONE_SHOTS):
                tail = "\n".join(compose.logs(service).splitlines()[-25:])
                print(f"--- {service} (last lines)\n{tail}", flush=True)
            raise
        say("PASSED")
        return 0
    finally:
        started = time.monotonic()
        compose("down", "-v", "--remove-orphans", check=False, quiet=True)
        left = run("docker", "ps", "-a", "-q", "--filter", f"label=com.docker.compose.project={PROJECT}", quiet=True)
        volumes = run(
            "docker", "volume", "ls", "-q", "--filter", f"label=com.docker.compose.project={PROJECT}", quiet=True
        )
        shutil.rmtree(secrets, ignore_errors=True)
        say(
            f"down -v in {time.monotonic() - started:.1f}s; containers left: {len(left.split())}, "
            f"volumes left: {len(volumes.split())}"
        )
        if left.strip() or volumes.strip():
            raise Failed("docker-compose down -v left containers or volumes behind")


if __name__ == "__main__":
    sys.exit(main())
