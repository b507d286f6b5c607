"""``tocsin --help`` and every ``tocsin COMMAND --help`` are for people: plain text (no reStructuredText
or Sphinx roles), no source file named, each command described in one line; ``tocsin --version``
prints the installed package's version."""

from __future__ import annotations

import argparse
import importlib.metadata
import re

import pytest

from cli.main import build_parser, main

MARKUP = re.compile(r"``|:(func|class|mod|meth|data|attr):`|\.\. \w+::")
SOURCE_FILE = re.compile(r"[\w./-]+\.py\b")


def _parsers(parser: argparse.ArgumentParser, name: str = "tocsin") -> list[tuple[str, argparse.ArgumentParser]]:
    """The parser and every command's, its subcommands' too (``tocsin events show``)."""
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found += _parsers(sub, f"{name} {sub_name}")
    return found


PARSERS = _parsers(build_parser())


@pytest.mark.parametrize(("name", "parser"), PARSERS, ids=[name for name, _ in PARSERS])
def test_help_is_plain_text_naming_no_source_file(name: str, parser: argparse.ArgumentParser) -> None:
    shown = parser.format_help()
    assert not MARKUP.search(shown), f"{name} --help shows markup: {MARKUP.search(shown)}"
    assert not SOURCE_FILE.search(shown), f"{name} --help names a source file: {SOURCE_FILE.search(shown)}"


@pytest.mark.parametrize(("name", "parser"), PARSERS[1:], ids=[name for name, _ in PARSERS[1:]])
def test_every_command_describes_itself_in_one_line(name: str, parser: argparse.ArgumentParser) -> None:
    description = parser.description or ""
    assert description.strip(), f"{name} --help has no description"
    assert "\n" not in description and description.endswith("."), description


@pytest.mark.parametrize("command", ["api", "worker", "migrate", "purge", "kafka-check"])
def test_the_processes_commands_are_described_in_their_own_help(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    usage, _, rest = capsys.readouterr().out.partition("\n\n")
    assert usage.startswith(f"usage: tocsin {command}")
    assert rest.split("\n\n")[0].strip(), f"tocsin {command} --help says nothing of what it does"


def test_version_is_the_installed_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"tocsin {importlib.metadata.version('tocsin')}"
