"""No product file (the code, the documentation, the README) sends its reader to a file the repository
does not have: the design, style and API notes the project started from (DESIGN.md, STYLE.md, API.md)
and the shared folder beside it (../shared/) are not part of it. Point to a page of docs/ instead (a
comment may name the concept)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("app", "api", "cli", "streams", "tables", "docs", "README.md")
OUTSIDE = re.compile(r"\b(?:DESIGN|STYLE|API)\.md\b|\.\./shared\b")

# Files in a part of the tree another change is rewriting at the moment (issue 39): each still names
# an outside file and is fixed there. Remove an entry once its file is clean (the second test says so).
PENDING = {
    "app/domain/workflows/episodes.py",
    "app/domain/workflows/filters/__init__.py",
    "app/domain/workflows/workflow.py",
}


def _files() -> list[Path]:
    found: list[Path] = []
    for name in PRODUCT:
        path = ROOT / name
        found += [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return [p for p in found if "__pycache__" not in p.parts]


def mentions() -> dict[str, list[str]]:
    """Each product file naming an outside file: its lines that do, ``line: text``."""
    found: dict[str, list[str]] = {}
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # an image
            continue
        lines = [f"{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
        if lines:
            found[path.relative_to(ROOT).as_posix()] = lines
    return found


def test_no_product_file_names_a_file_outside_the_repository() -> None:
    assert {name: lines for name, lines in mentions().items() if name not in PENDING} == {}


def test_the_pending_files_still_need_their_exemption() -> None:
    assert set(mentions()) >= PENDING, "a pending file is clean now: take it out of PENDING"


def test_the_pattern_sees_each_outside_file_and_not_the_docs_own_pages() -> None:
    for text in ("see DESIGN.md", "STYLE.md's rule", '(API.md, "Errors")', "../shared/ids.md"):
        assert OUTSIDE.search(text), text
    for text in ("docs/api.md", "docs/reference/http-api.md", "docs/decisions/logs.md", "app/domain/shared/ids.py"):
        assert not OUTSIDE.search(text), text
