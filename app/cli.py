"""``tocsin run | api | worker | kafka | migrate | bootstrap | bench``."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from pydantic import ValidationError

from app.identity.signing_keys import SigningKeyError, SigningKeys, load_signing_keys
from app.settings import Settings, get_settings


def _say(message: str) -> None:
    print(f"tocsin: {message}", file=sys.stderr, flush=True)


def _signing_keys(settings: Settings) -> SigningKeys:
    """The token signing keys, creating the key file on first start (app/identity/signing_keys.py)."""
    keys = load_signing_keys(settings)
    if keys.created:
        _say(f"created a random token signing key in {keys.source} (mode 0600; keep it secret, back it up)")
    return keys


def cmd_api(settings: Settings) -> None:
    import asyncio

    import uvicorn

    from api.main import create_app
    from app.logthrottle import throttle_library_logs
    from app.topics import ensure_topics_when_reachable

    throttle_library_logs()
    app = create_app(settings, _signing_keys(settings))  # a bad key stops here, before anything starts
    # Wait for the broker before uvicorn installs its signal handlers: during its lifespan
    # startup uvicorn only notes a SIGTERM, so a wait there could not be stopped.
    asyncio.run(ensure_topics_when_reachable(settings))
    uvicorn.run(
        app,
        host=settings.api_host,
        port=settings.api_port,
        loop="uvloop",
        http="httptools",
        # uvicorn would believe X-Forwarded-For from 127.0.0.1 by default; the app reads it from
        # TOCSIN_TRUSTED_PROXIES only (api/fastpath.py).
        proxy_headers=False,
        access_log=False,  # api/fastpath.py writes one structured line per request instead (TOCSIN_ACCESS_LOG)
        log_config=_api_log_config(),
        log_level="info",
    )


def _api_log_config() -> dict[str, object]:
    """uvicorn's logging plus a root handler, so the API's own INFO lines (requests, discovery,
    JWKS) reach stderr with a timestamp."""
    from uvicorn.config import LOGGING_CONFIG

    config = json.loads(json.dumps(LOGGING_CONFIG))
    config["formatters"]["plain"] = {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    config["handlers"]["plain"] = {
        "formatter": "plain",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    config["root"] = {"handlers": ["plain"], "level": "INFO"}
    return dict(config)


def cmd_worker(_settings: Settings) -> None:
    from streams.worker import run_worker

    run_worker()


def cmd_migrate(settings: Settings) -> None:
    from app.store.db import migrate

    migrate(settings.effective_database_url)
    _say("database migrated")


async def _bootstrap(settings: Settings, org_name: str, only_if_empty: bool) -> dict[str, str] | None:
    from app.store.accounts import bootstrap, count_organizations
    from app.store.db import create_engine, sessionmaker

    engine = create_engine(settings.effective_database_url)
    try:
        async with sessionmaker(engine).begin() as session:
            if only_if_empty and await count_organizations(session):
                return None
            return await bootstrap(session, org_name)
    finally:
        await engine.dispose()


def cmd_bootstrap(settings: Settings, org_name: str) -> None:
    cmd_migrate(settings)
    print(json.dumps(asyncio.run(_bootstrap(settings, org_name, only_if_empty=False))), flush=True)


async def _purge(settings: Settings) -> dict[str, int]:
    from app.store.db import create_engine
    from app.store.retention import purge

    engine = create_engine(settings.effective_database_url)
    try:
        return await purge(engine, settings)
    finally:
        await engine.dispose()


def cmd_purge(settings: Settings) -> None:
    """One retention pass (what the API process runs every TOCSIN_RETENTION_INTERVAL_SECONDS)."""
    print(json.dumps(asyncio.run(_purge(settings))), flush=True)


def _kafka(settings: Settings) -> object:
    from app.kafka_local import LocalKafka

    port = settings.kafka_bootstrap.rpartition(":")[2]
    return LocalKafka(settings.var_dir / "kafka", port=int(port), progress=_say)


def cmd_kafka(settings: Settings, nodes: int = 1) -> None:
    from app.kafka_local import LocalKafka, LocalKafkaCluster

    kafka: LocalKafka | LocalKafkaCluster
    if nodes > 1:  # ports from the first one of TOCSIN_KAFKA_BOOTSTRAP up: brokers, then controllers
        port = int(settings.kafka_bootstrap.split(",")[0].rpartition(":")[2])
        kafka = LocalKafkaCluster(settings.var_dir / f"kafka-{nodes}", nodes, base_port=port, progress=_say)
    else:
        single = _kafka(settings)
        assert isinstance(single, LocalKafka)
        kafka = single
    kafka.start()
    _say(f"kafka on {kafka.bootstrap}; Ctrl-C stops it")
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while kafka.is_running():
            time.sleep(0.5)
    except KeyboardInterrupt:
        _say("stopping broker")
    finally:
        kafka.stop()


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


def cmd_run(settings: Settings, org_name: str) -> None:
    """Broker, migrations, bootstrap on first start, API and worker; Ctrl-C stops them all."""
    from app.kafka_local import LocalKafka
    from app.smtp_sink import SmtpSink

    kafka = _kafka(settings)
    assert isinstance(kafka, LocalKafka)
    mail_dir = settings.var_dir.resolve() / "mail"
    sink = SmtpSink(mail_dir, settings.smtp_host, settings.smtp_port)
    procs: list[subprocess.Popen[bytes]] = []
    stopping = False
    _signing_keys(settings)  # created once here, before the API replicas that read it start

    def on_signal(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        kafka.start()
        sink.start()
        _say(f"SMTP sink on {settings.smtp_host}:{settings.smtp_port}, mail kept in {mail_dir}")
        cmd_migrate(settings)
        created = asyncio.run(_bootstrap(settings, org_name, only_if_empty=True))
        env = {**os.environ, "TOCSIN_VAR_DIR": str(settings.var_dir.resolve())}
        # Webhooks to a local receiver need an explicit, narrow allowance (never private networks):
        # TOCSIN_LOOPBACK_TARGETS=127.0.0.1:9000 (README, Configuration).
        if settings.loopback_targets:
            _say(f"webhooks may reach the loopback receivers {', '.join(settings.loopback_targets)} over http")
        for role in ("api", "worker"):
            _say(f"starting {role}")
            procs.append(subprocess.Popen([sys.executable, "-m", "app.cli", role], env=env))
        base = f"http://{settings.api_host}:{settings.api_port}"
        _wait_ready(f"{base}/readyz", procs, timeout=120)
        if created is not None:
            print(json.dumps(created), flush=True)
        else:
            _say("database already bootstrapped (tocsin bootstrap --org NAME makes another organization)")
        _say(f"ready: API on {base} (docs {base}/docs), worker running; Ctrl-C stops everything")
        while not stopping and all(p.poll() is None for p in procs):
            time.sleep(0.3)
        if not stopping:
            _say("a process exited; stopping the rest")
    finally:
        _say("stopping")
        _stop(procs)
        sink.stop()
        kafka.stop()
        _say("stopped")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="tocsin", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="broker + migrations + api + worker")
    run.add_argument("--org", default="Tocsin")
    sub.add_parser("api", help="the HTTP API (uvicorn)")
    sub.add_parser("worker", help="the Faust worker")
    kafka = sub.add_parser("kafka", help="a local Kafka: one broker, or a cluster with --nodes 3")
    kafka.add_argument("--nodes", type=int, default=1, help="brokers (each also a controller); 3: replicated")
    sub.add_parser("migrate", help="bring the database schema up to date")
    sub.add_parser("purge", help="delete traces, push outbox, exchange and audit rows past their retention")
    boot = sub.add_parser("bootstrap", help="create an organization with an owner account")
    boot.add_argument("--org", required=True)
    bench = sub.add_parser("bench", help="benchmarks (see make bench)")
    bench.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    try:
        settings = get_settings()
    except ValidationError as exc:
        problems = "; ".join(str(error["msg"]).removeprefix("Value error, ") for error in exc.errors())
        raise SystemExit(f"tocsin: configuration refused: {problems}") from None
    Path(settings.var_dir).mkdir(parents=True, exist_ok=True)
    try:
        _dispatch(args, settings)
    except SigningKeyError as exc:
        raise SystemExit(f"tocsin: {exc} (see README, Configuration)") from None


def _dispatch(args: argparse.Namespace, settings: Settings) -> None:
    if args.command == "run":
        cmd_run(settings, args.org)
    elif args.command == "api":
        cmd_api(settings)
    elif args.command == "worker":
        cmd_worker(settings)
    elif args.command == "kafka":
        cmd_kafka(settings, args.nodes)
    elif args.command == "migrate":
        cmd_migrate(settings)
    elif args.command == "purge":
        cmd_purge(settings)
    elif args.command == "bootstrap":
        cmd_bootstrap(settings, args.org)
    elif args.command == "bench":
        # The benchmarks live with the tests (they drive the real processes like the e2e tests),
        # which are not installed: run from a checkout.
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        importlib.import_module("tests.bench.run").main(args.rest)


if __name__ == "__main__":
    main()
