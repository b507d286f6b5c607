"""Every shell block of README.md, the guides and the concept pages runs, in page order, on a fresh
stack (Kafka, API, worker), twice in a row: what a newcomer pastes works, and works again (issue 39,
item F). The convention — which blocks, the not-run marker, the preamble, what fails a block — is
tests/support/docs_shell.py's; tests/unit/test_docs_shell_blocks.py holds it without a stack.

Twice, because a tour that worked once and then failed, or doubled what it made (the second run's
book and workflow beside the first's, so that every later event opened two incidents), is what
readers met: after both runs each topic the pages made has exactly one workflow."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.docs_shell import MARK, ROOT, Block, every_block, script, unexpected_statuses
from tests.support.stack import Stack

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

PASS_TIMEOUT_SECONDS = 600


def run_pass(stack: Stack, run: list[Block], workdir: Path, number: int) -> str:
    """Run the blocks once in one bash, as a reader in one terminal; the statuses file's text."""
    statuses = workdir / f"statuses-{number}.txt"
    statuses.write_text("")
    path = workdir / f"pass-{number}.sh"
    path.write_text(script(run))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOCSIN_")}
    env |= {
        # the tour's preamble, with this stack's values (docs/guides/first-incident.md, "The tour")
        "TOCSIN_URL": stack.base_url,
        "TOCSIN_TOKEN": stack.credentials["access_token"],
        "TOCSIN_ORG": stack.org,
        "TOCSIN_DOCS_STATUSES": str(statuses),
        "TOCSIN_PROFILE_FILE": str(workdir / "no-profiles.toml"),  # never the developer's own
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    log = workdir / f"pass-{number}.log"
    with open(log, "wb") as out:
        try:
            done = subprocess.run(
                ["bash", str(path)],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=PASS_TIMEOUT_SECONDS,
            )
            code: int | str = done.returncode
        except subprocess.TimeoutExpired:
            code = f"no end within {PASS_TIMEOUT_SECONDS} s"
    output = log.read_text(errors="replace")
    if code != 0:
        blocks = [line for line in output.splitlines() if line.startswith(MARK)]
        failing = blocks[-1][len(MARK) :] if blocks else "(before the first block)"
        tail = "\n".join(output.splitlines()[-40:])
        pytest.fail(f"pass {number}: the block at {failing} failed ({code}); the output's end:\n{tail}")
    return statuses.read_text()


def workflows_per_topic(stack: Stack) -> Counter[str]:
    counts: Counter[str] = Counter()
    with stack.client() as client:
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
            page = client.get("/workflows", params=params)
            assert page.status_code == 200, page.text
            counts.update(str(w["topic_id"]) for w in page.json()["items"])
            cursor = page.json().get("next_cursor")
            if not cursor:
                return counts


def test_every_shell_block_of_the_pages_runs_twice_on_a_fresh_stack(stack_factory: Any, tmp_path: Path) -> None:
    run = [block for block in every_block() if block.not_run is None]
    stack: Stack = stack_factory()
    stack.start()
    answered = []
    for number in (1, 2):
        statuses = run_pass(stack, run, tmp_path, number)
        assert unexpected_statuses(statuses, run) == [], f"pass {number}: answers the blocks do not name"
        answered.append(sum(1 for line in statuses.splitlines() if line.strip().isdigit()))
    assert answered[0] == answered[1] >= 30, answered  # the second pass ran as much as the first
    counts = workflows_per_topic(stack)
    assert counts and set(counts.values()) == {1}, counts
