"""The product never imports the tests (issue 17, item 3): every module of app, api, streams and tables,
read as source (so an import inside a function or under TYPE_CHECKING counts too)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("app", "api", "streams", "tables", "cli")


def _imported(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    package = module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the module's own package
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}".lstrip(".")) for alias in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in {
            "import_module",
            "__import__",
        }:
            found += [(node.lineno, arg.value) for arg in node.args[:1] if isinstance(arg, ast.Constant)]
    return [(line, name) for line, name in found if isinstance(name, str)]


def _modules() -> list[tuple[Path, str]]:
    modules = []
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules.append((path, ".".join(parts)))
    return modules


def test_the_product_imports_nothing_from_tests() -> None:
    modules = _modules()
    assert {name.split(".")[0] for _, name in modules} == set(PRODUCT), "a product package has no module"
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path, module in modules
        for line, name in _imported(ast.parse(path.read_text(), str(path)), module)
        if name == "tests" or name.startswith("tests.")
    ]
    assert offenders == []


def test_the_check_sees_every_kind_of_import() -> None:
    source = (
        "import tests.support.db\n"
        "from tests.support import stack\n"
        "from tests import bench\n"
        "def f():\n"
        "    import importlib\n"
        "    return importlib.import_module('tests.bench.run')\n"
    )
    names = {name for _, name in _imported(ast.parse(source), "app.kafka.topics")}
    assert {"tests.support.db", "tests.support", "tests.bench", "tests.bench.run"} <= names
    relative = {name for _, name in _imported(ast.parse("from ..store import db"), "app.kafka.topics")}
    assert "app.store.db" in relative


def test_only_tables_reaches_into_fausts_internals() -> None:
    """Faust's and aiokafka's private attributes are touched in ``tables/`` only (the adapter and
    the patches, issue 17 item 4): outside it, no ``x._name`` on anything but ``self`` or ``cls``,
    and no import of Faust's submodules (``faust`` itself declares the app and its agents)."""
    found = []
    for package in ("app", "api", "streams"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text())
            rel = path.relative_to(ROOT)
            for node in ast.walk(tree):
                private = isinstance(node, ast.Attribute) and node.attr.startswith("_") and node.attr[1:2] != "_"
                if private and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("faust."):  # faust.* submodules
                    found.append(f"{rel}:{node.lineno} from {node.module}")
    assert found == [], found
