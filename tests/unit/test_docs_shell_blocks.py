"""The convention the docs test runs the pages' shell blocks by (tests/support/docs_shell.py), held
without a stack: every page's blocks parse (no console block, each not-run marker with a reason and
right before a shell block), few blocks are left out, the tour's preamble exports what the test
exports, and a block's curl statuses are judged by what it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.docs_shell import (
    MARK,
    PREAMBLE,
    Block,
    DocsShellError,
    blocks,
    every_block,
    pages,
    unexpected_statuses,
)


def test_the_pages_run_readme_then_the_tour_first() -> None:
    order = pages()
    assert order[:2] == ["README.md", "docs/guides/first-incident.md"]
    assert all(p.startswith(("docs/guides/", "docs/concepts/")) for p in order[1:])


def test_every_page_parses_and_most_blocks_run() -> None:
    found = every_block()
    skipped = [b for b in found if b.not_run]
    assert len(found) - len(skipped) >= 15, "the pages' examples run"
    assert len(skipped) * 4 <= len(found), [b.where for b in skipped]  # sparingly, each with its reason


def test_the_tour_s_preamble_exports_what_the_test_exports() -> None:
    [preamble] = [b for b in every_block() if "export TOCSIN_URL=" in b.text]
    assert preamble.page == "docs/guides/first-incident.md" and preamble.not_run
    exported = [line.split("=", 1)[0].removeprefix("export ") for line in preamble.text.splitlines()]
    assert tuple(exported) == PREAMBLE
    runnable = "".join(b.text for b in every_block() if not b.not_run)
    assert "127.0.0.1:8080" not in runnable, "a runnable block reaches the API through $TOCSIN_URL"


def _page(tmp_path: Path, text: str) -> list[Block]:
    (tmp_path / "page.md").write_text(text)
    return blocks("page.md", tmp_path)


def test_a_marker_names_the_next_block_only(tmp_path: Path) -> None:
    found = _page(tmp_path, "<!-- not-run: needs docker -->\n\n```sh\nmake x\n```\n\n```bash\necho y\n```\n")
    assert [(b.line, b.text, b.not_run) for b in found] == [(3, "make x\n", "needs docker"), (7, "echo y\n", None)]
    assert _page(tmp_path, "```json\n{}\n```\n```python\nx = 1\n```\n") == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("```console\n$ ls\n```\n", "a console block"),
        ("<!-- not-run: -->\n```sh\nls\n```\n", "says no reason"),
        ("<!-- not-run: why -->\ntext\n```sh\nls\n```\n", "not right before a block"),
        ("<!-- not-run: why -->\n```json\n{}\n```\n", "before a json block"),
        ("text\n<!-- not-run: why -->\n", "not right before a block"),
    ],
)
def test_a_broken_convention_is_refused(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(DocsShellError, match=said):
        _page(tmp_path, text)


def test_statuses_outside_2xx_must_be_named_by_their_block() -> None:
    run = [Block("a.md", 1, "curl x   # → 422 refused\n", None), Block("b.md", 9, "curl y\n", None)]
    statuses = f"{MARK}a.md:1\n201\n422\n{MARK}b.md:9\n200\n404\nnone\n"
    assert unexpected_statuses(statuses, run) == ["b.md:9: HTTP 404", "b.md:9: HTTP none"]
