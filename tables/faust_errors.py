"""Faust's exceptions that the stages meet (only ``tables/`` imports Faust's submodules)."""

from __future__ import annotations

from faust.exceptions import NotReady

# faust's producer before its client exists: mode flags the service started before its on_start
# runs, so a stage that sends at once may meet it; worth waiting for, never an error
ProducerNotReady = NotReady

__all__ = ["ProducerNotReady"]
