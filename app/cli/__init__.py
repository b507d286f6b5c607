"""The ``tocsin`` command: one module per command (``tocsin <command>`` runs ``app.cli.<command>``),
the argument parser and dispatch in :mod:`app.cli.main`, ``python -m app.cli`` in ``__main__``."""

# Console scripts installed before the CLI became a package import main from app.cli.
from app.cli.main import main

__all__ = ["main"]
