"""Issue 30's acceptance, as an operator runs it: against a freshly started ``tocsin run`` (what
``make run`` starts: broker, database, API and worker on the embedded defaults), a METRIC topic
under 40 partition keys x 30 values at 100 publishes/s; two more ``tocsin worker`` processes join
after ~2 s, one is killed with ``kill -9`` ~4 s later and started again on its own data directory ~2 s
after that; publishing ends ~4 s later, while the group still rebalances. Every accepted event must
be decided as the spec's METRIC table says and every NOTIFY/RESOLVE delivered within
tests/support/operator.BOUND_S, with no record given up as lost and every source partition applied
to its last stable offset.

    .venv/bin/python -m tests.operator_scenario --runs 5 [--order while-rebalancing]

Each run starts its own ``tocsin run`` on free ports in a fresh directory and stops it (and the
workers it added) before the next. Exit status 0 only if every run passed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.settings import Settings
from devstack.ports import free_port
from tests.support.operator import ORDERS, Outcome, run_scenario, set_up_topic
from tests.support.receiver import webhook_receiver
from tests.support.stack import ROOT, Stack, wait_for


def _started(run_log: Path, proc: subprocess.Popen[bytes]) -> dict[str, str]:
    """The bootstrap line ``tocsin run`` prints once its API is ready (organization and owner token)."""

    def line() -> dict[str, str] | None:
        if proc.poll() is not None:
            raise AssertionError(f"tocsin run exited: {Stack.tail(run_log)}")
        for text in run_log.read_text(errors="replace").splitlines():
            if text.startswith("{") and '"access_token"' in text:
                found: dict[str, str] = json.loads(text)
                return found
        return None

    return wait_for(line, 240, "tocsin run ready (its bootstrap line)", 0.5)


def one_run(order: str, var: Path) -> Outcome:
    defaults = Settings()
    api_port, kafka_port = free_port(), free_port()
    env = {
        "TOCSIN_VAR_DIR": str(var),
        "TOCSIN_API_PORT": str(api_port),
        "TOCSIN_WORKER_PORT": str(free_port()),
        "TOCSIN_SMTP_PORT": str(free_port()),
        "TOCSIN_KAFKA_BOOTSTRAP": f"127.0.0.1:{kafka_port}",
        "TOCSIN_ALLOW_PRIVATE_NETWORKS": "true",  # the webhook receiver is on loopback
        "TOCSIN_PUBLISH_RATE_PER_SECOND": "1000000",  # the limiter is not under test
        "TOCSIN_PUBLISH_BURST": "1000000",
        "TOCSIN_ACCESS_LOG": "false",
        "PYTHONUNBUFFERED": "1",
    }
    run_log = var / "run.log"
    with open(run_log, "ab") as out:
        run = subprocess.Popen(
            [sys.executable, "-m", "cli", "run"],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    stack = Stack(var / "extra", env["TOCSIN_KAFKA_BOOTSTRAP"], partitions=defaults.publish_partitions, extra_env=env)
    # the workers this scenario adds join the run's group, on its topics and database
    stack.configure(
        TOCSIN_TOPIC_PREFIX=defaults.topic_prefix,
        TOCSIN_WORKER_ID=defaults.worker_id,
        TOCSIN_VAR_DIR=str(var),
        TOCSIN_PUBLIC_URL=f"http://127.0.0.1:{api_port}",
    )
    stack.base_url = f"http://127.0.0.1:{api_port}"
    try:
        stack.credentials = _started(run_log, run)
        with webhook_receiver() as (got, base):
            set_up_topic(stack, base)
            return run_scenario(
                stack,
                ORDERS[order],
                delivered=lambda: {body["event_id"] for _p, _h, body in got.snapshot()},
                logs=lambda: [run_log, *stack.worker_logs],
            )
    finally:
        stack.stop()
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGINT)  # tocsin run stops its API, worker, SMTP sink and broker
            try:
                run.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--order", choices=sorted(ORDERS), default="while-rebalancing")
    parser.add_argument("--keep", action="store_true", help="keep each run's directory (logs, data)")
    args = parser.parse_args()
    failed = 0
    for n in range(1, args.runs + 1):
        var = Path(tempfile.mkdtemp(prefix=f"tocsin-operator-{n}-"))
        started = time.monotonic()
        outcome = one_run(args.order, var)
        verdict = "PASS" if outcome.ok and not outcome.refused else "FAIL"
        failed += verdict == "FAIL"
        took = time.monotonic() - started
        print(f"run {n}/{args.runs} {args.order}: {verdict} in {took:.0f} s: {outcome.describe()}", flush=True)
        if args.keep or verdict == "FAIL":
            print(f"  logs and data kept in {var}", flush=True)
        else:
            shutil.rmtree(var)
    print(f"{args.runs - failed} of {args.runs} runs passed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
