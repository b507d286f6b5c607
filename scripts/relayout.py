"""Rewrite references to the modules that issues 17 (items 3 and 6) and 32 (item 4) moved, across the checkout.

Branches written before the move still import the old paths; after merging one, run

    python scripts/relayout.py            # rewrite in place, list the files changed
    python scripts/relayout.py --check    # only list them; exit 1 if any would change

It is idempotent (a second run changes nothing): no new name contains an old one. What it rewrites,
in *.py, Makefile, pyproject.toml, *.md, Dockerfile, docker-compose.yml and .ci/*:

- ``from app import metrics, faust_patches`` → ``from app import faust_patches`` plus
  ``from app.observability import metrics`` (a renamed module keeps its old local name with ``as``);
- ``from app.metrics import X``, ``import app.topics`` and every dotted ``app.topics`` after it;
- ``from app.cli import cmd_api`` → ``from app.cli.api import cmd_api`` (the CLI became a package);
- module names in strings and comments (``"app.topics"``, ``python -m app.X``, ``app.cli:main``) and
  file paths (``app/faust_app.py``).

In Python code (outside strings and comments) a dotted ``app.topics`` is rewritten only on import
lines or when the file imports the module itself (``import app.topics``): elsewhere ``app`` is
a variable (a faust.App has a ``topics`` attribute). Changed Python files are then sorted and formatted
with the ruff next to this interpreter, when there is one.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Old dotted name → new dotted name (modules, and attributes of modules that became packages).
MOVES: dict[str, str] = {
    # development and test infrastructure leaves the product
    "app.kafka_local": "devstack.kafka",
    "app.smtp_sink": "devstack.smtp_sink",
    "app.postgres_local": "tests.support.postgres_local",
    # Kafka plumbing
    "app.faust_app": "app.kafka.app",
    "app.topics": "app.kafka.topics",
    "app.records": "app.kafka.records",
    "app.partitioner": "app.kafka.partitioner",
    "app.config_cache": "app.kafka.config_changes",
    # observability
    "app.metrics": "app.observability.metrics",
    "app.logfmt": "app.observability.logfmt",
    "app.logthrottle": "app.observability.logthrottle",
    "app.health": "app.observability.health",
    # the CLI: one module per command (app/cli.py → app/cli/<command>.py, dispatcher app/cli/main.py),
    # then out of app into the top-level cli/ (issue 32: what starts processes may import every room)
    "app.cli.cmd_run": "cli.run.cmd_run",
    "app.cli.cmd_api": "cli.api.cmd_api",
    "app.cli.cmd_worker": "cli.worker.cmd_worker",
    "app.cli.cmd_kafka": "cli.kafka.cmd_kafka",
    "app.cli.cmd_migrate": "cli.migrate.cmd_migrate",
    "app.cli.cmd_purge": "cli.purge.cmd_purge",
    "app.cli.cmd_bootstrap": "cli.bootstrap.cmd_bootstrap",
    "app.cli": "cli",
    # app/domain/ grouped as docs/architecture.md describes it (issue 32); pipeline.py stays on top, and
    # filters.py became a package split along its concepts (operators, validation, compiled, sites)
    # identity and IAM
    "app.domain.auth_policy": "app.domain.iam.auth_policy",
    "app.domain.binding_index": "app.domain.iam.binding_index",
    "app.domain.evaluation": "app.domain.iam.evaluation",
    "app.domain.permissions": "app.domain.iam.permissions",
    "app.domain.principal": "app.domain.iam.principal",
    "app.domain.roles": "app.domain.iam.roles",
    "app.domain.resource_names": "app.domain.iam.resource_names",
    "app.domain.tokens": "app.domain.iam.tokens",
    "app.domain.subject_filter": "app.domain.iam.subject_filter",
    "app.domain.conditions": "app.domain.iam.conditions",
    "app.domain.sharing": "app.domain.iam.sharing",
    # events and control
    "app.domain.publish": "app.domain.events.publish",
    "app.domain.publish_check": "app.domain.events.publish_check",
    "app.domain.notification": "app.domain.events.notification",
    "app.domain.limits": "app.domain.events.limits",
    "app.domain.control": "app.domain.events.control",
    # workflows and incidents
    "app.domain.workflow": "app.domain.workflows.workflow",
    "app.domain.workflow_stage": "app.domain.workflows.workflow_stage",
    "app.domain.topic_config": "app.domain.workflows.topic_config",
    "app.domain.episodes": "app.domain.workflows.episodes",
    "app.domain.incidents": "app.domain.workflows.incidents",
    "app.domain.filters": "app.domain.workflows.filters",
    # delivery of actions
    "app.domain.push": "app.domain.delivery.push",
    "app.domain.webhooks": "app.domain.delivery.webhooks",
    "app.domain.deliveries": "app.domain.delivery.deliveries",
    "app.domain.delivery_verdicts": "app.domain.delivery.delivery_verdicts",
    # what every group uses
    "app.domain.ids": "app.domain.shared.ids",
    "app.domain.milliseconds": "app.domain.shared.milliseconds",
    "app.domain.json_bounds": "app.domain.shared.json_bounds",
    "app.domain.strict_model": "app.domain.shared.strict_model",
    "app.domain.rate_limit": "app.domain.shared.rate_limit",
    "app.domain.retry_schedule": "app.domain.shared.retry_schedule",
    "app.domain.client_address": "app.domain.shared.client_address",
}
# The entries above that became packages: their file path maps to the package's folder.
PACKAGES = {"app.cli", "app.domain.filters"}
# The entries above that are attributes, not modules (no file path of their own).
ATTRIBUTES = {old for old in MOVES if old.startswith("app.cli.cmd_")}
# Entry points ("module:attribute") and file paths.
STRINGS: dict[str, str] = {
    "app.cli:main": "cli.main:main",
    "app/cli.py": "cli/main.py",
    "app/cli": "cli",
    "app/domain/filters.py": "app/domain/workflows/filters/",
}
for _old, _new in MOVES.items():
    if _old not in ATTRIBUTES and _old not in PACKAGES:
        STRINGS[_old.replace(".", "/") + ".py"] = _new.replace(".", "/") + ".py"
MODULE_MOVES = dict(MOVES)

_DOTTED = re.compile(
    r"(?<![\w.])(" + "|".join(re.escape(old) for old in sorted(MODULE_MOVES, key=len, reverse=True)) + r")(?![\w])"
)
_STRING = re.compile(
    r"(?<![\w./])(" + "|".join(re.escape(old) for old in sorted(STRINGS, key=len, reverse=True)) + r")(?![\w])"
)
# `from app import a, b as c` and `from app.cli import (x, y)`: the packages whose members moved.
_FROM_PACKAGE = re.compile(
    r"^(?P<indent>[ \t]*)from (?P<package>app|app\.cli) import "
    r"(?:\((?P<paren>[^)]*)\)|(?P<plain>[^\n()#]*?))(?P<comment>[ \t]*#[^\n]*)?$",
    re.MULTILINE,
)
_IMPORT_MODULE = re.compile(r"^[ \t]*import (app\.\w+)[ \t]*$", re.MULTILINE)
_IMPORT_LINE = re.compile(r"[ \t]*(from|import)[ \t]")  # matched at a line start

SUFFIXES = {".py", ".md"}
NAMES = {"Makefile", "pyproject.toml", "Dockerfile", "docker-compose.yml"}
SKIP_DIRS = {".git", ".venv", "var", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache", "bench-results"}


def candidates(root: Path) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        if any(part in SKIP_DIRS for part in path.relative_to(root).parts) or not path.is_file():
            continue
        if path.resolve() == Path(__file__).resolve():
            continue  # this script names every old path on purpose
        relative = path.relative_to(root)
        if path.suffix in SUFFIXES or path.name in NAMES or relative.parts[0] == ".ci":
            found.append(path)
    return sorted(found)


def _split_from_package(match: re.Match[str]) -> str:
    indent, package = match["indent"], match["package"]
    body = match["paren"] if match["paren"] is not None else match["plain"]
    names = [part.strip() for part in body.replace("\n", " ").split(",") if part.strip()]
    if any(not re.fullmatch(r"\w+(?: as \w+)?", name) for name in names):
        return match[0]  # not a shape this script understands: leave it for a person
    kept: list[str] = []
    moved: dict[str, list[str]] = {}
    for name in names:
        member, _, alias = name.partition(" as ")
        new = MODULE_MOVES.get(f"{package}.{member}")
        if new is None:
            kept.append(name)
            continue
        new_package, _, new_member = new.rpartition(".")
        local = alias or member
        moved.setdefault(new_package, []).append(new_member if new_member == local else f"{new_member} as {local}")
    if not moved:
        return match[0]
    comment = match["comment"] or ""
    lines = [f"{indent}from {package} import {', '.join(kept)}{comment}"] if kept else []
    lines += [f"{indent}from {new_package} import {', '.join(members)}" for new_package, members in moved.items()]
    return "\n".join(lines)


def _string_and_comment_spans(text: str) -> list[tuple[int, int]] | None:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.STRING, tokenize.COMMENT) or token.type == getattr(
                tokenize, "FSTRING_MIDDLE", -1
            ):
                (row0, col0), (row1, col1) = token.start, token.end
                spans.append((starts[row0 - 1] + col0, starts[row1 - 1] + col1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None  # not valid Python (yet): rewrite import lines and strings only where certain
    return spans


def rewrite_python(text: str) -> str:
    text = _FROM_PACKAGE.sub(_split_from_package, text)
    imported = {name for name in _IMPORT_MODULE.findall(text) if name in MODULE_MOVES}
    spans = _string_and_comment_spans(text) or []

    def in_span(offset: int) -> bool:
        return any(start <= offset < end for start, end in spans)

    def dotted(match: re.Match[str]) -> str:
        old = match[1]
        line_start = text.rfind("\n", 0, match.start()) + 1
        if in_span(match.start()) or _IMPORT_LINE.match(text, line_start) or old in imported:
            return MODULE_MOVES[old]
        return match[0]

    text = _DOTTED.sub(dotted, text)
    return _STRING.sub(lambda match: STRINGS[match[1]], text)


def rewrite_text(text: str) -> str:
    text = _DOTTED.sub(lambda match: MODULE_MOVES[match[1]], text)
    return _STRING.sub(lambda match: STRINGS[match[1]], text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    parser.add_argument("root", nargs="?", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    changed: list[Path] = []
    for path in candidates(args.root):
        try:
            old = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite_python(old) if path.suffix == ".py" else rewrite_text(old)
        if new != old:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in changed:
        print(path.relative_to(args.root))
    if args.check:
        return 1 if changed else 0
    python_files = [str(path) for path in changed if path.suffix == ".py"]
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if python_files and ruff:  # the split imports in ruff's order and format
        subprocess.run([ruff, "check", "--quiet", "--select", "I", "--fix", *python_files], cwd=args.root, check=False)
        subprocess.run([ruff, "format", "--quiet", *python_files], cwd=args.root, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
