"""`tocsin bootstrap`: the organization's JSON line on stdout; `--if-empty` (the compose
deployment's one-shot, run at every `docker-compose up`) creates one only on an empty database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bootstrap(var: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOCSIN_VAR_DIR": str(var)}
    env.pop("TOCSIN_DATABASE_URL", None)  # SQLite in var/
    command = [sys.executable, "-m", "cli", "bootstrap", "--org", "Acme", *flags]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)


def test_if_empty_creates_the_first_organization_only(tmp_path: Path) -> None:
    first = _bootstrap(tmp_path, "--if-empty")
    created = json.loads(first.stdout)
    assert created["organization_id"].startswith("org_")
    assert created["access_token"].startswith("tcs_")

    again = _bootstrap(tmp_path, "--if-empty")
    assert again.stdout == ""
    assert "an organization exists already; none created" in again.stderr

    # without the flag it makes another organization, as before
    other = json.loads(_bootstrap(tmp_path).stdout)
    assert other["organization_id"] != created["organization_id"]
