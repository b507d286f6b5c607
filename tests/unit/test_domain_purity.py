"""app/domain stays pure: no I/O library is imported by any of its modules."""

from __future__ import annotations

import ast
from pathlib import Path

FORBIDDEN = {"faust", "aiokafka", "fastapi", "sqlalchemy", "httpx", "rocksdict", "starlette", "asyncpg", "aiosqlite"}
DOMAIN = Path(__file__).resolve().parents[2] / "app" / "domain"


def test_domain_imports_no_io_library() -> None:
    offenders = []
    modules = sorted(DOMAIN.rglob("*.py"))
    assert modules, "app/domain has no modules"
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []
