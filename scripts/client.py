"""``python -m scripts.client [--check]``: generate the typed Python client (clients/python/tocsin-client/)
from the committed OpenAPI document (docs/reference/openapi.json, which ``python -m scripts.reference``
writes) with openapi-python-client, or check the committed client is what it generates.

The generator runs into a temporary directory either way, and every module it wrote is then imported,
one by one, by this interpreter (the venv's: the supported Python 3.11); a module that fails to import
fails the run with its name. ``--check`` then compares it with the committed tree (every file, both ways)
and lists what differs; without it the committed tree is replaced. Its configuration is
clients/python/config.yml; the generated code is never edited by hand: a defect of the generator is fixed
in its templates (``TEMPLATE_FIXES``).
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.resources
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "reference" / "openapi.json"
CONFIG = ROOT / "clients" / "python" / "config.yml"
TARGET = ROOT / "clients" / "python" / "tocsin-client"
PACKAGE = "tocsin_client"

# Defects of openapi-python-client's own templates, fixed here: each template named is read from the
# installed generator, each text replaced (it must occur exactly once, so a generator upgrade that changes
# the template fails here rather than generating something else), and the directory of the results is
# given to the generator as --custom-template-path. Drop a fix once the pinned generator has it.
TEMPLATE_FIXES: dict[str, list[tuple[str, str]]] = {
    "endpoint_macros.py.jinja": [
        # openapi-python-client issue 1451 (open in 0.29.1): with several request-body content types, the
        # body's `required` is gathered by a `{% set %}` inside the loop, which Jinja scopes to the loop, so
        # `| Unset = UNSET` was always appended, even to a required body; the import of Unset is not (the
        # body is required), so publish.py and publish_batch.py raised NameError on import. A namespace
        # carries the value out of the loop.
        (
            "body:\n    {%- for body in endpoint.bodies -%}"
            "{% set body_required = body_required and body.prop.required %}",
            "{% set bodies = namespace(required=true) %}\nbody:\n    {%- for body in endpoint.bodies -%}"
            "{% set bodies.required = bodies.required and body.prop.required %}",
        ),
        (
            "{% if not body_required %} | Unset = UNSET{% endif %}",
            "{% if not bodies.required %} | Unset = UNSET{% endif %}",
        ),
    ],
    "endpoint_module.py.jinja": [
        # With several content types the body's type picks the content type: `isinstance(body, T)` for
        # each. For an array body T is `list[Item]`, and isinstance() refuses a parameterized generic
        # (TypeError on every call of publish_batch). An array body is told by its items' type instead.
        (
            "    if isinstance(body, {{body.prop.get_type_string(no_optional=True) | as_unembedded_code }}):\n",
            '{% if body.prop.template == "list_property.py.jinja" %}\n'
            "    if isinstance(body, list) and all(isinstance(item, "
            "{{ body.prop.inner_property.get_type_string(no_optional=True) | as_unembedded_code }})"
            " for item in body):\n"
            "{% else %}\n"
            "    if isinstance(body, {{body.prop.get_type_string(no_optional=True) | as_unembedded_code }}):\n"
            "{% endif %}\n",
        ),
    ],
}


def fixed_templates(into: Path) -> Path:
    """A directory under ``into`` holding the generator's templates that :data:`TEMPLATE_FIXES` fixes."""
    out = into / "templates"
    out.mkdir()
    templates = importlib.resources.files("openapi_python_client") / "templates"
    for name, fixes in TEMPLATE_FIXES.items():
        text = (templates / name).read_text(encoding="utf-8")
        for old, new in fixes:
            if text.count(old) != 1:
                raise SystemExit(
                    f"openapi-python-client's {name} no longer holds, once, the text scripts/client.py fixes:\n"
                    f"{old}\nSee whether the installed generator fixed it (TEMPLATE_FIXES) and update the fix."
                )
            text = text.replace(old, new)
        (out / name).write_text(text, encoding="utf-8")
    return out


# Run by a fresh interpreter with the client's directory as argv[1]: imports every module of the package,
# one by one, and prints the failures as JSON ([[module, error], ...]).
_IMPORT_EACH = """
import importlib, json, pathlib, sys, traceback
root = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(root))
failures = []
for path in sorted((root / sys.argv[2]).rglob("*.py")):
    parts = path.relative_to(root).with_suffix("").parts
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failures.append([name, "".join(traceback.format_exception_only(exc)).strip()])
print(json.dumps(failures))
"""


def import_failures(tree: Path) -> list[str]:
    """Every module of the client under ``tree`` imported in turn by a fresh interpreter (this one's
    executable: the venv's Python 3.11); each that fails, as ``module: error``."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, str(tree), PACKAGE], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"importing the client's modules failed:\n{done.stdout}\n{done.stderr}")
    return [f"{name}: {error}" for name, error in json.loads(done.stdout)]


def check_imports(tree: Path) -> None:
    """Exit (status 1) naming every module of the client under ``tree`` that does not import."""
    failed = import_failures(tree)
    if failed:
        version = ".".join(map(str, sys.version_info[:3]))
        raise SystemExit(
            f"{len(failed)} module(s) of the generated client do not import on Python {version}:\n"
            + "\n".join(f"  {line}" for line in failed)
        )


def generate(into: Path) -> Path:
    """The client generated under ``into``; its directory."""
    out = into / "tocsin-client"
    bin_dir = Path(sys.executable).parent  # the venv's: openapi-python-client and the ruff its hooks run
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "RUFF_NO_CACHE": "true"}
    command = [
        str(bin_dir / "openapi-python-client"),
        "generate",
        f"--path={DOCUMENT}",
        f"--config={CONFIG}",
        f"--custom-template-path={fixed_templates(into)}",
        "--meta=uv",
        f"--output-path={out}",
    ]
    done = subprocess.run(command, cwd=into, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not out.is_dir():
        raise SystemExit(f"openapi-python-client failed:\n{done.stdout}\n{done.stderr}")
    return out


def differences(left: Path, right: Path, prefix: str = "") -> list[str]:
    """Paths (relative) that exist on one side only or differ in content."""
    compared = filecmp.dircmp(left, right, ignore=["__pycache__"])
    found = [f"{prefix}{name}" for name in compared.left_only + compared.right_only]
    _, mismatch, errors = filecmp.cmpfiles(left, right, compared.common_files, shallow=False)
    found += [f"{prefix}{name}" for name in mismatch + errors]
    for sub in compared.common_dirs:
        found += differences(left / sub, right / sub, f"{prefix}{sub}/")
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.client", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when the committed client is not current")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tocsin-client-") as tmp:
        fresh = generate(Path(tmp))
        check_imports(fresh)
        if args.check:
            stale = differences(fresh, TARGET) if TARGET.is_dir() else ["(missing)"]
            if stale:
                print(f"{TARGET.relative_to(ROOT)} is not current; run `make client`. Differs: {', '.join(stale)}")
                return 1
            print(f"{TARGET.relative_to(ROOT)} is current")
            return 0
        if TARGET.exists():
            shutil.rmtree(TARGET)
        shutil.copytree(fresh, TARGET)
        print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
