"""``python -m scripts.reference [--check]``: write the reference pages, or check they are current."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "reference"


def pages() -> dict[str, str]:
    """Each generated file (relative to ``docs/reference/``) and what the code gives for it."""
    from scripts.reference import cli, configuration, errors, http_api, metrics

    spec = http_api.document()
    makers: dict[str, Callable[[], str]] = {
        "configuration.md": configuration.page,
        "cli.md": cli.page,
        "errors.md": errors.page,
        "metrics.md": metrics.page,
        "http-api.md": lambda: http_api.page(spec),
        "openapi.json": lambda: http_api.openapi_json(spec),
    }
    return {name: make() for name, make in makers.items()}


def stale(generated: dict[str, str]) -> list[str]:
    """The files whose committed text differs from ``generated`` (or that are missing)."""
    return [
        name
        for name, text in generated.items()
        if not (OUT / name).is_file() or (OUT / name).read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.reference", description=__doc__)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is not current")
    args = parser.parse_args(argv)
    # The pages say what the code does on its defaults, whatever this shell's TOCSIN_* variables say.
    for name in [n for n in os.environ if n.startswith("TOCSIN_")]:
        del os.environ[name]
    generated = pages()
    names = stale(generated)
    if args.check:
        for name in names:
            print(f"docs/reference/{name} differs from the code: run `make docs` (or python -m scripts.reference)")
        return 1 if names else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        (OUT / name).write_text(generated[name], encoding="utf-8")
        print(f"wrote docs/reference/{name}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
