"""The shell blocks of the documentation, as tests/e2e/test_docs_shell.py runs them (issue 39, item F).

Which pages, in which order: README.md, then the guides, then the concept pages, each group in
mkdocs.yml's nav order — one reader in one terminal, from the tour (the first guide) on, so a later
page may use the tour's variables, as the pages say. A shell block is a fence opened with ```` ```sh ````
(or ``bash``, ``shell``); ``console`` blocks (prompts and output mixed) are not used, and refused so
that none is silently left out.

A block is not run when the last non-blank line before its fence is ``<!-- not-run: REASON -->``
(an HTML comment: the site does not show it). Use it sparingly, for a block that cannot run on the
test's own stack (``make run`` itself, a container engine, values pasted from a terminal, a synopsis
of placeholders), and say why.

Every block runs from the **preamble** the tour states: ``TOCSIN_URL``, ``TOCSIN_TOKEN`` and
``TOCSIN_ORG`` exported (the tour's not-run block, which a reader fills from ``make run``'s JSON
line; the test exports its own stack's instead), the repository as the working directory (the
pages call ``.venv/bin/tocsin``).

A block passes when it exits 0 (under ``set -e -o pipefail``) and every HTTP answer its ``curl``
calls got is a 2xx, or a status the block itself names (``# → 422 …``): a status the reader is not
told to expect fails it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SHELL_INFOS = frozenset({"sh", "bash", "shell"})
REFUSED_INFOS = frozenset({"console", "shell-session"})
NOT_RUN = re.compile(r"^<!--\s*not-run:(.*?)-->\s*$")
# What the tour's preamble exports, and the docs test with its own stack's values.
PREAMBLE = ("TOCSIN_URL", "TOCSIN_TOKEN", "TOCSIN_ORG")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    text: str
    not_run: str | None  # the reason, when marked not-run

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


class DocsShellError(AssertionError):
    """A page breaks the convention (a console block, a not-run marker without reason or block)."""


def nav_pages(section: str, root: Path = ROOT) -> list[str]:
    """The pages of one top-level section of mkdocs.yml's nav, in order, relative to docs/."""
    nav = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    for entry in nav:
        if isinstance(entry, dict) and section in entry:
            return [page for item in entry[section] for page in item.values()]
    raise DocsShellError(f"mkdocs.yml's nav has no section {section!r}")


def pages(root: Path = ROOT) -> list[str]:
    """README.md, the guides and the concept pages, in the order they run."""
    return [
        "README.md",
        *(f"docs/{p}" for p in nav_pages("Guides", root)),
        *(f"docs/{p}" for p in nav_pages("Concepts", root)),
    ]


def blocks(page: str, root: Path = ROOT) -> list[Block]:
    """The shell blocks of ``page``, in order, each with its not-run reason (if marked)."""
    lines = (root / page).read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    fence: str | None = None  # the open fence's backticks
    info = ""
    start = 0
    body: list[str] = []
    marker: tuple[int, str] | None = None  # (line, reason) of the last not-run marker not yet used
    last_text = 0  # the line of the last non-blank line outside a block
    for number, line in enumerate(lines, 1):
        if fence is None:
            opening = re.match(r"^(`{3,})\s*([\w-]*)", line)
            if opening:
                fence, info, start, body = opening.group(1), opening.group(2), number, []
                if info in REFUSED_INFOS:
                    raise DocsShellError(f"{page}:{number}: a {info} block; write it as sh (commands only)")
                if marker is not None and marker[0] != last_text:
                    raise DocsShellError(f"{page}:{marker[0]}: a not-run marker not right before a block")
                if marker is not None and info not in SHELL_INFOS:
                    raise DocsShellError(f"{page}:{marker[0]}: a not-run marker before a {info or 'plain'} block")
                continue
            if match := NOT_RUN.match(line.strip()):
                if marker is not None:
                    raise DocsShellError(f"{page}:{marker[0]}: a not-run marker not right before a block")
                reason = match.group(1).strip()
                if not reason:
                    raise DocsShellError(f"{page}:{number}: a not-run marker says no reason")
                marker = (number, reason)
            if line.strip():
                last_text = number
            continue
        if line.strip() == fence:
            if info in SHELL_INFOS:
                found.append(Block(page, start, "\n".join(body) + "\n", marker[1] if marker else None))
            fence, marker = None, None
            last_text = number
            continue
        body.append(line)
    if marker is not None:
        raise DocsShellError(f"{page}:{marker[0]}: a not-run marker not right before a block")
    return found


def every_block(root: Path = ROOT) -> list[Block]:
    return [block for page in pages(root) for block in blocks(page, root)]


# Every curl of a block appends the status of its last answer to $TOCSIN_DOCS_STATUSES (its headers
# dumped to a file of their own, so the block's output, pipes and -w stay its own).
PRELUDE = r"""set -e -o pipefail
shopt -s inherit_errexit
curl() {
  local headers rc=0
  headers=$(mktemp)
  command curl -D "$headers" "$@" || rc=$?
  awk '/^HTTP\// {code = $2} END {print (code == "" ? "none" : code)}' "$headers" >> "$TOCSIN_DOCS_STATUSES"
  rm -f "$headers"
  return $rc
}
"""

MARK = "@@ block "


def script(run: list[Block]) -> str:
    """One bash script running ``run`` in order, each announced on stdout and in the statuses file."""
    parts = [PRELUDE]
    for block in run:
        announce = f"{MARK}{block.where}"
        # on a line of its own in the output, after an answer without a final newline
        parts.append(f"printf '\\n%s\\n' '{announce}'\necho '{announce}' >> \"$TOCSIN_DOCS_STATUSES\"\n{block.text}")
    parts.append(f"printf '\\n%s\\n' '{MARK}end'\n")
    return "\n".join(parts)


def unexpected_statuses(statuses: str, run: list[Block]) -> list[str]:
    """``page:line: status`` for each answer outside 2xx that its block does not name."""
    texts = {block.where: block.text for block in run}
    where, problems = "", []
    for line in statuses.splitlines():
        if line.startswith(MARK):
            where = line[len(MARK) :]
            continue
        code = line.strip()
        if not code or (code.isdigit() and 200 <= int(code) < 300):
            continue
        if code.isdigit() and re.search(rf"\b{code}\b", texts.get(where, "")):
            continue
        problems.append(f"{where}: HTTP {code}")
    return problems
