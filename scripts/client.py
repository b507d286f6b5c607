"""``python -m scripts.client [--check]``: generate the typed Python client (clients/python/tocsin-client/)
from the committed OpenAPI document (docs/reference/openapi.json, which ``python -m scripts.reference``
writes) with openapi-python-client, or check the committed client is what it generates.

The generator runs into a temporary directory either way: ``--check`` compares it with the committed
tree (every file, both ways) and lists what differs; without it the committed tree is replaced. Its
configuration is clients/python/config.yml; the generated code is never edited by hand.
"""

from __future__ import annotations

import argparse
import filecmp
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
