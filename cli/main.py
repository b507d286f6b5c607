"""The ``tocsin`` command: its parser (:func:`build_parser`, also read by scripts/reference/ for
docs/reference/cli.md) and its dispatch. Every text of the parser is shown to people as is (``tocsin
--help``): plain text, no markup, no source file."""

from __future__ import annotations

import argparse
import importlib.metadata
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from app.identity.signing_keys import SigningKeyError
from app.kafka.security import KafkaAccessError
from app.kafka.topics import PartitionMismatch
from app.observability.logs import configure as configure_logging
from app.settings import Settings, get_settings
from cli.api import cmd_api
from cli.bootstrap import cmd_bootstrap
from cli.dead_letters import cmd_dead_letters_list, cmd_dead_letters_replay
from cli.events import cmd_events_show
from cli.kafka import cmd_kafka
from cli.kafka_check import cmd_kafka_check
from cli.migrate import cmd_migrate
from cli.partitions import cmd_partitions
from cli.profile import ProfileError, load_target
from cli.publish import MAX_BATCH_SIZE, cmd_publish
from cli.purge import cmd_purge
from cli.run import cmd_run
from cli.worker import cmd_worker

# Where a refused start points its reader: the documentation site's pages (docs/, `make docs`).
CONFIGURATION_PAGE = "docs/reference/configuration.md"
MANAGED_KAFKA_PAGE = "docs/guides/managed-kafka.md"


DESCRIPTION = (
    "Tocsin, the incident-alerting event engine. Run it with tocsin run (everything on one machine) or its "
    "processes one by one (api, worker, kafka, migrate, purge, bootstrap, partitions, kafka-check), which read "
    "their configuration from TOCSIN_* environment variables. Talk to a running API from a terminal with tocsin "
    "publish, events and dead-letters (they read TOCSIN_URL, TOCSIN_TOKEN and TOCSIN_ORG, or a profile of "
    "~/.config/tocsin/profiles.toml)."
)

EPILOG = "tocsin COMMAND --help describes a command."


def version() -> str:
    """The installed package's version (``tocsin --version``)."""
    try:
        return importlib.metadata.version("tocsin")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary: str, **kwargs: Any
) -> argparse.ArgumentParser:
    """A subcommand whose one-line ``summary`` is shown both in ``tocsin --help`` and, as a sentence,
    at the top of ``tocsin NAME --help``."""
    return sub.add_parser(name, help=summary, description=f"{summary[:1].upper()}{summary[1:]}.", **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The ``tocsin`` command's parser (also read by scripts/reference/ for docs/reference/cli.md)."""
    parser = argparse.ArgumentParser(prog="tocsin", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = _command(
        sub, "run", "a local broker and SMTP sink, the migrations, the API and the worker, together (Ctrl-C stops all)"
    )
    run.add_argument(
        "--org", default="Tocsin", help="the organization bootstrapped on the first start (its owner's token printed)"
    )
    _command(sub, "api", "serve the HTTP API (uvicorn) on TOCSIN_API_HOST:TOCSIN_API_PORT")
    _command(sub, "worker", "run the worker: its stages decide, store and deliver what was published")
    kafka = _command(sub, "kafka", "a local Kafka: one broker, or a cluster with --nodes 3")
    kafka.add_argument("--nodes", type=int, default=1, help="brokers (each also a controller); 3: replicated")
    kafka.add_argument(
        "--scram-user",
        action="append",
        metavar="NAME:PASSWORD",
        help="one broker with a SASL_SSL listener (SCRAM, a self-made CA) and this user; repeatable",
    )
    _command(sub, "kafka-check", "connect to the configured Kafka (TLS, SASL) and list its brokers and topics")
    _command(sub, "migrate", "bring the database schema up to date (alembic), then exit")
    _command(sub, "purge", "delete traces, push outbox, exchange and audit rows past their retention, then exit")
    boot = _command(sub, "bootstrap", "create an organization with an owner account")
    boot.add_argument("--org", required=True, help="the new organization's name (its owner's token is printed once)")
    boot.add_argument(
        "--if-empty",
        action="store_true",
        help="only when no organization exists yet (a deployment's one-shot, run at every start)",
    )
    boot.add_argument(
        "--owner-email",
        default="",
        help="the owner person's e-mail (default owner@localhost); a one-time link to choose a password is printed",
    )
    grow = _command(
        sub, "partitions", "grow a drained, stopped deployment's keyed topics and changelogs to --count partitions"
    )
    grow.add_argument(
        "--count", type=int, required=True, help="the new partition count (then TOCSIN_PUBLISH_PARTITIONS)"
    )
    _api_commands(sub)
    return parser


# The commands that talk to a running API, as a person at a terminal does: no settings, no var/.
API_COMMANDS = ("publish", "events", "dead-letters")


def _api_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    profile = argparse.ArgumentParser(add_help=False)
    profile.add_argument("--profile", help="the profile of the profile file (default: TOCSIN_PROFILE, else 'default')")
    publish = _command(
        sub,
        "publish",
        "publish requests from a file or stdin: one JSON object, a JSON array or NDJSON (batched, progress shown)",
        parents=[profile],
    )
    publish.add_argument("topic", help="the workflow topic's id or key")
    publish.add_argument("file", nargs="?", default="-", help="a file of requests; - or nothing: stdin")
    publish.add_argument(
        "--batch-size",
        type=int,
        default=500,
        help=f"requests per batch publish for an array or NDJSON (default 500; at most {MAX_BATCH_SIZE}, what the "
        "server takes by default: TOCSIN_MAX_PUBLISH_BATCH_ITEMS)",
    )
    events = _command(sub, "events", "an event's trace")
    events_sub = events.add_subparsers(dest="events_command", required=True, metavar="COMMAND")
    show = _command(events_sub, "show", "the trace of the event a publish answered", parents=[profile])
    show.add_argument("event_id", help="the server's event id (evt_…)")
    show.add_argument("--json", action="store_true", help="the trace as the API answers it")
    show.add_argument(
        "--wait",
        type=float,
        default=0,
        metavar="SECONDS",
        help="keep asking this long while the event has no trace yet (the worker decides it after the publish)",
    )
    letters = _command(sub, "dead-letters", "deliveries that exhausted their retries")
    letters_sub = letters.add_subparsers(dest="dead_letters_command", required=True, metavar="COMMAND")
    listing = _command(letters_sub, "list", "every dead letter of the organization", parents=[profile])
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    replay = _command(letters_sub, "replay", "deliver dead letters again now", parents=[profile])
    replay.add_argument("delivery_ids", nargs="+", metavar="ID", help="a dead letter's id (act_…)")


def _dispatch_api_command(args: argparse.Namespace) -> None:
    try:
        target = load_target(args.profile)
    except ProfileError as exc:
        raise SystemExit(f"tocsin: {exc}") from None
    try:
        if args.command == "publish":
            cmd_publish(target, args.topic, args.file, batch_size=args.batch_size)
        elif args.command == "events":
            cmd_events_show(target, args.event_id, as_json=args.json, wait=args.wait)
        elif args.dead_letters_command == "list":
            cmd_dead_letters_list(target, as_json=args.json)
        else:
            cmd_dead_letters_replay(target, args.delivery_ids)
    except httpx.TransportError as exc:
        raise SystemExit(f"tocsin: cannot reach {target.url}: {exc}") from None
    except OSError as exc:
        raise SystemExit(f"tocsin: {exc}") from None


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in API_COMMANDS:
        _dispatch_api_command(args)
        return
    try:
        settings = get_settings()
    except ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors())
        raise SystemExit(f"tocsin: configuration refused: {problems}") from None
    configure_logging(settings.log_format, settings.log_level)
    Path(settings.var_dir).mkdir(parents=True, exist_ok=True)
    try:
        _dispatch(args, settings)
    except SigningKeyError as exc:
        raise SystemExit(f"tocsin: {exc} (see {CONFIGURATION_PAGE})") from None
    except KafkaAccessError as exc:
        raise SystemExit(f"tocsin: {exc} (see {MANAGED_KAFKA_PAGE})") from None
    except PartitionMismatch as exc:  # the API and the worker refuse to start on mismatched topics
        raise SystemExit(f"tocsin: {exc}") from None


def _problem(error: Any) -> str:
    """One settings error: the variable (when pydantic names the field) and pydantic's message."""
    message = str(error["msg"]).removeprefix("Value error, ")
    field = error["loc"][0] if error.get("loc") else None
    return f"TOCSIN_{str(field).upper()}: {message}" if field is not None else message


def _dispatch(args: argparse.Namespace, settings: Settings) -> None:
    if args.command in ("api", "worker") and (problem := settings.public_url_problem()) is not None:
        raise SystemExit(f"tocsin: {problem}")
    if args.command == "run":
        cmd_run(settings, args.org)
    elif args.command == "api":
        cmd_api(settings)
    elif args.command == "worker":
        cmd_worker(settings)
    elif args.command == "kafka":
        cmd_kafka(settings, args.nodes, args.scram_user)
    elif args.command == "kafka-check":
        cmd_kafka_check(settings)
    elif args.command == "migrate":
        cmd_migrate(settings)
    elif args.command == "purge":
        cmd_purge(settings)
    elif args.command == "bootstrap":
        cmd_bootstrap(settings, args.org, only_if_empty=args.if_empty, owner_email=args.owner_email)
    elif args.command == "partitions":
        if not 1 <= args.count <= 256:
            raise SystemExit("tocsin: --count must be between 1 and 256 (as TOCSIN_PUBLISH_PARTITIONS)")
        cmd_partitions(settings, args.count)


if __name__ == "__main__":
    main()
