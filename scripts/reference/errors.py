"""The error classes: found in the product's source, read from the classes themselves.

``app/errors.py`` draws the tree in its module docstring; :func:`drawn` reads that drawing and
:func:`from_classes` states the same from the classes, so a test compares the two, and
:func:`page` renders ``docs/reference/errors.md`` from the classes and the API's error table.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

from scripts.reference import NONE

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "api", "streams", "tables", "cli")
HOME = "app/errors.py"  # a class drawn without a module lives here
# Codes the API answers without an error class or an OpenAPI description (FastAPI's own routing).
UNDESCRIBED = {"RES-003": "method not allowed on this path"}

# One drawn line: tree marks, the name, "(module, also Base)" and "[status code]" when given,
# "retriable" when the class is, then ": what it means" (free text, not compared).
_LINE = re.compile(
    r"^(?P<indent>[ │├└─]*)(?P<name>[A-Z]\w*)"
    r"(?: \((?P<paren>[^)]*)\))?"
    r"(?: \[(?P<status>\d{3}) (?P<codes>[A-Z]+-\d{3}(?:\|[A-Z]+-\d{3})*)\])?"
    r"(?P<retriable> retriable)?"
    r"(?::.*)?$"
)


@dataclass(frozen=True)
class Drawn:
    """What one line of the drawing states about a class (or what the class states of itself)."""

    name: str
    parent: str | None
    module: str
    also: tuple[str, ...]
    status: int | None
    codes: tuple[str, ...]  # empty: no HTTP answer drawn; several: set per instance (AuthenticationError)
    retriable: bool


@dataclass(frozen=True)
class ErrorClass:
    name: str
    path: str  # the file that defines it, relative to the project
    cls: type[Exception]


def _root() -> type[Exception]:
    from app.errors import TocsinError

    return TocsinError


def product_error_classes() -> list[ErrorClass]:
    """Every public class of the product that derives from ``TocsinError``, in source order.

    Found in the source (so a class in a module nothing imports yet is not missed), then imported.
    """
    bases: dict[str, tuple[str, list[str]]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    names = [ast.unparse(b).split(".")[-1] for b in node.bases]
                    bases[node.name] = (path.relative_to(ROOT).as_posix(), names)

    def under_root(name: str) -> bool:
        return name == "TocsinError" or (name in bases and any(under_root(b) for b in bases[name][1]))

    found = []
    for name, (where, _) in bases.items():
        if name.startswith("_") or not under_root(name):
            continue
        module = importlib.import_module(where.removesuffix(".py").replace("/", "."))
        found.append(ErrorClass(name, where, getattr(module, name)))
    return found


def _sets_code_per_instance(cls: type[Exception]) -> bool:
    """The class writes ``self.code`` in its ``__init__`` (its class attribute is the root's default)."""
    init = cls.__dict__.get("__init__")
    return init is not None and "self.code =" in inspect.getsource(init)


def from_classes() -> dict[str, Drawn]:
    """What the classes say of themselves, in the drawing's terms."""
    root = _root()
    out = {}
    for found in product_error_classes():
        cls = found.cls
        parents = [b for b in cls.__bases__ if issubclass(b, root)]
        also = () if cls is root else tuple(sorted(b.__name__ for b in cls.__bases__ if not issubclass(b, root)))
        answered = cls is root or getattr(cls, "http_status", 500) != 500
        status: int | None = getattr(cls, "http_status", 500) if answered else None
        codes: tuple[str, ...] = ()
        if answered and not _sets_code_per_instance(cls):
            codes = (str(getattr(cls, "code", "")),)
        out[found.name] = Drawn(
            name=found.name,
            parent=parents[0].__name__ if parents else None,
            module=found.path,
            also=also,
            status=status,
            codes=codes,
            retriable=bool(getattr(cls, "retriable", False)),
        )
    return out


def drawing(docstring: str) -> list[str]:
    """The drawing's lines: from the line that starts with ``TocsinError`` to the first blank one."""
    lines = docstring.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("TocsinError"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def drawn(docstring: str) -> dict[str, Drawn]:
    """What the drawing states; a line it cannot read raises ``ValueError`` naming it."""
    out: dict[str, Drawn] = {}
    stack: list[tuple[int, str]] = []  # (depth, name) of the line's ancestors
    for line in drawing(docstring):
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"the error drawing has a line it cannot read: {line!r}")
        depth = len(match["indent"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parts = [p.strip() for p in (match["paren"] or "").split(",") if p.strip()]
        module = next((p for p in parts if not p.startswith("also ")), HOME)
        also = tuple(sorted(p.removeprefix("also ").strip() for p in parts if p.startswith("also ")))
        name = match["name"]
        out[name] = Drawn(
            name=name,
            parent=stack[-1][1] if stack else None,
            module=module,
            also=also,
            status=int(match["status"]) if match["status"] else None,
            codes=tuple(match["codes"].split("|")) if match["codes"] else (),
            retriable=bool(match["retriable"]),
        )
        stack.append((depth, name))
    return out


def differences(drawn_classes: dict[str, Drawn], actual: dict[str, Drawn]) -> list[str]:
    """Each way the drawing and the classes differ, one sentence each (empty: they agree).

    Codes set per instance are not in the class: there the drawing's list is not compared.
    """
    problems = [f"{name} ({actual[name].module}) is not drawn" for name in sorted(actual.keys() - drawn_classes.keys())]
    problems += [f"{name} is drawn but no such class exists" for name in sorted(drawn_classes.keys() - actual.keys())]
    for name in sorted(drawn_classes.keys() & actual.keys()):
        line, cls = drawn_classes[name], actual[name]
        for field in ("parent", "module", "also", "status", "retriable"):
            if getattr(line, field) != getattr(cls, field):
                problems.append(
                    f"{name}: drawn {field} {getattr(line, field)!r}, the class has {getattr(cls, field)!r}"
                )
        if cls.codes and line.codes != cls.codes:
            problems.append(f"{name}: drawn code {'|'.join(line.codes)!r}, the class has {cls.codes[0]!r}")
    return problems


def _api_codes() -> dict[str, tuple[int, str]]:
    """code → (status, meaning) from the API's error table (``api/errors.py``), as OpenAPI shows them."""
    from api import errors as api_errors

    codes: dict[str, tuple[int, str]] = {}
    for status, code in api_errors._HTTP_CODES.items():
        codes[code] = (status, "")
    for status, text in api_errors._DESCRIPTIONS.items():
        current = None
        for part in text.split("; "):
            head, _, rest = part.partition(" ")
            if re.fullmatch(r"[A-Z]+-\d{3}", head):
                current = head
                codes[current] = (status, rest)
            elif current is not None:
                codes[current] = (status, f"{codes[current][1]}; {part}")
    return codes


def _first_paragraph(cls: type) -> str:
    """The docstring's first paragraph, its reStructuredText roles and literals as Markdown code."""
    doc = " ".join((inspect.getdoc(cls) or "").split("\n\n")[0].split())
    return re.sub(r":\w+:`([^`]+)`", r"`\1`", doc).replace("``", "`")


def page() -> str:
    """``docs/reference/errors.md``."""
    import app.errors

    actual = from_classes()
    classes = {found.name: found for found in product_error_classes()}
    codes = _api_codes()
    codes.setdefault("SYS-000", (500, "an unexpected error (a bug): the body says only `internal error`"))
    for code, meaning in UNDESCRIBED.items():
        if code in codes and not codes[code][1]:
            codes[code] = (codes[code][0], meaning)
    for line in actual.values():
        for code in line.codes:
            codes.setdefault(code, (line.status or 500, ""))
    out = [
        "# Errors",
        "",
        "<!-- Generated by `python -m scripts.reference` from the error classes and api/errors.py: do not edit. -->",
        "",
        'Every error the API answers has one shape, `{"code": "...", "message": "...", "details": {...}}`.',
        "A `422 VAL-001` lists the failing fields in `details.fields` (at most 20, then `details.more_fields`",
        "counts the rest). A `retriable` error may succeed when sent again later; a retriable `429` or",
        "`503` carries `Retry-After` (the statuses HTTP defines it for). The token exchange",
        "(`POST /auth/workload-identity/{id}/token`) answers in the RFC 6749 §5.2 form instead,",
        '`{"error", "error_description"}`: `400 invalid_request`,',
        "`401 invalid_token`, `403 access_denied`, `429 temporarily_unavailable` with `Retry-After`",
        "(see [Federation](../concepts/federation.md#errors)).",
        "",
        "## Codes",
        "",
        "| code | HTTP | meaning | raised as | retriable |",
        "|---|---|---|---|---|",
    ]
    for code, (status, meaning) in sorted(codes.items(), key=lambda item: (item[1][0], item[0])):
        raised = sorted(
            name
            for name, line in actual.items()
            if code in line.codes or (not line.codes and line.status == status and line.parent is not None)
        )
        retriable = [name for name in raised if actual[name].retriable]
        if not retriable or len(retriable) == len(raised):
            says = "yes" if retriable else "no"
        else:  # a code some classes answer retriable and others not: which ones
            says = "as " + ", ".join(f"`{name}`" for name in retriable)
        names = ", ".join(f"[`{name}`](#{name.lower()})" for name in raised) or NONE
        out.append(f"| `{code}` | {status} | {meaning or NONE} | {names} | {says} |")
    out += [
        "",
        "## The classes",
        "",
        "One root, `TocsinError` (`app/errors.py`); only `api/` turns them into answers. The drawing in",
        "`app/errors.py`, which a test compares with the classes:",
        "",
        "```text",
        *drawing(app.errors.__doc__ or ""),
        "```",
        "",
    ]
    order = [name for name in drawn(app.errors.__doc__ or "") if name in actual]
    for name in order + sorted(actual.keys() - set(order)):
        line = actual[name]
        answer = f"{line.status} {'|'.join(line.codes)}".strip() if line.status else "not answered as such"
        also = f"; also a `{'`, `'.join(line.also)}`" if line.also else ""
        parent = f"; under `{line.parent}`" if line.parent else ""
        out += [
            f"### {name}",
            "",
            f"`{classes[name].path}`{parent}{also}. Answer: {answer}. Retriable: {'yes' if line.retriable else 'no'}.",
            "",
            _first_paragraph(classes[name].cls) or "(no docstring)",
            "",
        ]
    return "\n".join(out).rstrip() + "\n"
