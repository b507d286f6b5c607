"""``tocsin worker``: the worker (its stages decide, store and deliver what was published)."""

from __future__ import annotations

from app.settings import Settings


def cmd_worker(_settings: Settings) -> None:
    from streams.worker import run_worker

    run_worker()
