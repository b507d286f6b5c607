"""One exception root: every error class the product defines derives from ``TocsinError``.

Read from the source (no product module is imported, so the agents' Faust app is not built).
A private class (``_EarlyClose``) is a signal inside its own module and never leaves it.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "api", "streams", "tables", "cli")
LIBRARY_ERRORS = {"KafkaError", "HTTPException"}


def _classes() -> dict[str, tuple[str, list[str]]]:
    found: dict[str, tuple[str, list[str]]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    bases = [b.id if isinstance(b, ast.Name) else ast.unparse(b).split(".")[-1] for b in node.bases]
                    found[node.name] = (str(path.relative_to(ROOT)), bases)
    return found


def _is_builtin_error(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def test_every_error_class_derives_from_tocsin_error() -> None:
    classes = _classes()

    def is_error(name: str) -> bool:
        if _is_builtin_error(name) or name in LIBRARY_ERRORS:
            return True
        return name in classes and any(is_error(b) for b in classes[name][1])

    def under_root(name: str) -> bool:
        return name == "TocsinError" or (name in classes and any(under_root(b) for b in classes[name][1]))

    outside = [
        f"{path}: {name}"
        for name, (path, _bases) in classes.items()
        if not name.startswith("_") and is_error(name) and not under_root(name)
    ]
    assert outside == []


def test_each_error_name_is_defined_once() -> None:
    names: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef) and node.name in ("RateLimited", "Outcome"):
                    names.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    assert {name: len(paths) for name, paths in names.items()} == {"RateLimited": 1, "Outcome": 1}
