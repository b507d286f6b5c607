"""The ``tocsin`` command: one module per command (``tocsin <command>`` runs ``cli.<command>``),
the argument parser and dispatch in :mod:`cli.main`, ``python -m cli`` in ``__main__``.

The room above every other: what starts processes (the API, the worker, the local broker and SMTP
sink) imports them, and nothing imports it (pyproject.toml's import contracts)."""
