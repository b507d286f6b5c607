"""What the control-agent bench sections share: the progress line, the METRIC profile, and a run
of ``tests/bench/control_worker.py`` to the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.stack import ROOT, Stack

PROFILE: dict[str, Any] = {
    "type": "METRIC",
    "rules": [{"metric_name": "level", "mode": "ABSOLUTE", "threshold": 10}],
    "exit_stable_limit": 3,
}


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def run_control_worker(
    argv: list[str], env: dict[str, str], log: Path, timeout: float, what: str
) -> tuple[list[str], int]:
    """Runs ``argv`` (a ``tests.bench.control_worker`` command) with its stderr in ``log`` until it
    exits; returns its stdout's lines then the log's (Faust routes a worker's stdout into its log,
    so a result line may be in either) and its exit code. Killed after ``timeout`` seconds."""
    with open(log, "wb") as err:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise RuntimeError(f"the {what} did not finish: {Stack.tail(log)}") from None
    return [*out.decode().splitlines(), *log.read_text(errors="replace").splitlines()], proc.returncode
