"""No tracked text file keeps a merge's conflict markers: a README once did, unnoticed by every
other check (prose is neither linted nor imported)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(rb"^(<{7} |={7}$|>{7} )", re.MULTILINE)
TEXT = (".py", ".md", ".toml", ".yml", ".yaml", ".json", ".sh", ".lua", ".cfg", ".ini", ".txt", ".lock")


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [name for name in out.decode().split("\0") if name]
    return [ROOT / n for n in names if n.endswith(TEXT) or Path(n).name in ("Makefile", "Dockerfile", "run")]


def test_no_tracked_text_file_has_conflict_markers() -> None:
    files = _tracked()
    assert len(files) > 100  # the listing worked
    found = []
    for path in files:
        if path.is_file():
            text = path.read_bytes()
            found += [f"{path.relative_to(ROOT)}:{_line(text, m.start())}" for m in MARKER.finditer(text)]
    assert found == []


def _line(text: bytes, offset: int) -> int:
    return text.count(b"\n", 0, offset) + 1


def test_the_check_sees_a_marker() -> None:
    assert MARKER.search(b"text\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n")
    assert not MARKER.search(b"| ======= |\n<<<<<<<< eight\n")
