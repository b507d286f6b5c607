"""The ``tocsin`` command: one module per command (``tocsin <command>`` runs ``app.cli.<command>``),
the argument parser and dispatch in :mod:`app.cli.main`, ``python -m app.cli`` in ``__main__``."""
