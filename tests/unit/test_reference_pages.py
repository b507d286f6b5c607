"""The documentation's generated reference pages and the README's links (issue 32, items 1 and 3).

``docs/reference/`` is generated from the code (``python -m scripts.reference``); these fail when a
committed page differs from what the code gives, or when the README points at a page or heading
that does not exist. ``make lint`` also runs ``mkdocs build --strict`` over the whole site.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from scripts.reference import cli, configuration, metrics
from scripts.reference.__main__ import pages, stale

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_committed_reference_pages_are_what_the_code_gives() -> None:
    assert stale(pages()) == [], "run `make docs` (or python -m scripts.reference) and commit docs/reference/"


def test_every_setting_is_on_the_configuration_page_with_its_default_and_bounds() -> None:
    page = configuration.page()
    for variable, _field in configuration.variables():
        assert f"`{variable}`" in page
    row = next(line for line in page.splitlines() if "`TOCSIN_PUBLISH_PARTITIONS`" in line)
    assert "| integer | `12` | ≥ 1, ≤ 256 |" in row


def test_every_command_and_option_of_the_cli_is_on_its_page() -> None:
    page = cli.page()
    action, _ = cli._subcommands(cli.parser())
    for name, command in action.choices.items():
        assert f"## tocsin {name}" in page
        for option in command._actions:
            for flag in option.option_strings:
                assert flag in page or flag in ("-h", "--help")


def test_every_metric_family_is_on_the_metrics_page() -> None:
    page = metrics.page()
    for family in ("tocsin_publishes_total", "tocsin_consumer_lag", "tocsin_cache_entries", "process_open_fds"):
        assert f"`{family}`" in page


def slugify(heading: str) -> str:
    """A heading's anchor as MkDocs makes it (Python-Markdown's ``toc`` slugify)."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def _anchors(markdown: str) -> set[str]:
    headings = {slugify(m.group(1).strip()) for m in re.finditer(r"^#{1,6} (.+)$", markdown, re.M)}
    return headings | set(re.findall(r'<a id="([^"]+)"', markdown))


def test_the_readme_is_short_and_each_of_its_links_reaches_a_page_and_heading() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    broken = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        page = ROOT / path
        if not page.is_file() or (anchor and anchor not in _anchors(page.read_text(encoding="utf-8"))):
            broken.append(target)
    assert broken == []


def test_from_the_readme_one_click_reaches_sending_settings_errors_and_benchmarks() -> None:
    targets = {t.partition("#")[0] for t in LINK.findall((ROOT / "README.md").read_text(encoding="utf-8"))}
    assert {
        "docs/guides/sending-events.md",
        "docs/reference/configuration.md",
        "docs/reference/errors.md",
        "docs/benchmarks.md",
    } <= targets


def test_every_setting_has_a_description() -> None:
    assert configuration.missing_descriptions() == [], "give each field of app/settings/ a description="
