"""Every relative link of the documentation (docs/**/*.md) and of README.md leads somewhere: its file
exists, and its ``#anchor``, if any, is a heading (or an explicit id) of the page it names.
``mkdocs build --strict`` (make lint) checks the site's own pages too; this also covers README.md,
links from the pages to files outside docs/, and runs with the unit tests."""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
EXPLICIT_ID = re.compile(r"\{:?\s*#([\w-]+)[^}]*\}|<a\s[^>]*?(?:id|name)=\"([^\"]+)\"")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _prose(text: str) -> str:
    """The page without its code blocks and code spans (a link shown as code is no link)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _mkdocs_slug(heading: str) -> str:
    """Python-Markdown's toc slug (the documentation site's anchors)."""
    value = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def _github_slug(heading: str) -> str:
    """GitHub's anchor of a heading (README.md and the pages as the repository shows them)."""
    value = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return value.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    text = page.read_text(encoding="utf-8")
    found: set[str] = set()
    for match in EXPLICIT_ID.finditer(text):
        found.add(match.group(1) or match.group(2))
    counts: dict[str, int] = {}
    for match in HEADING.finditer(FENCE.sub("", text)):
        title = EXPLICIT_ID.sub("", match.group(1))
        shown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "").strip()
        for slug in {_mkdocs_slug(shown), _github_slug(shown)}:
            seen = counts.get(slug, 0)
            counts[slug] = seen + 1
            found.add(slug if seen == 0 else f"{slug}_{seen}")  # Python-Markdown's repeats
            found.add(slug if seen == 0 else f"{slug}-{seen}")  # GitHub's
    return frozenset(found)


def links(page: Path) -> list[str]:
    text = _prose(page.read_text(encoding="utf-8"))
    return [m.group(1) for m in INLINE_LINK.finditer(text)] + [m.group(1) for m in REFERENCE_LINK.finditer(text)]


def broken(page: Path) -> list[str]:
    problems = []
    for target in links(page):
        if SCHEME.match(target) or target.startswith("//"):
            continue  # another site, mailto: …
        path, _, anchor = target.partition("#")
        if path.startswith("/"):
            problems.append(f"{target}: an absolute path (write it relative to the page)")
            continue
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            problems.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            shown = resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else resolved
            problems.append(f"{target}: no heading or id #{anchor} in {shown}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_the_checker_sees_a_broken_file_and_a_broken_anchor(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# A title\n\n## Second `part`\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-title) [ok](other.md#second-part) [ok](#here) [site](https://example.com/x.md)\n"
        "[gone](missing.md) [bad anchor](other.md#nowhere) `[in code](missing.md)`\n\n"
        "```\n[in a block](missing.md)\n```\n\n## Here\n\n[ref]: other.md#nope\n"
    )
    assert [problem.split(" in ")[0] for problem in broken(page)] == [
        "missing.md: no such file",
        "other.md#nowhere: no heading or id #nowhere",
        "other.md#nope: no heading or id #nope",
    ]
