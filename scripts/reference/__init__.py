"""The reference pages of the documentation site, generated from the code so they cannot drift.

``python -m scripts.reference`` writes them to ``docs/reference/`` (``make docs`` does, then serves
the site); ``python -m scripts.reference --check`` writes nothing and exits 1 naming each page that
differs from what the code gives (``make lint`` runs it before ``mkdocs build --strict``).

Each page has one module: ``configuration`` (``app.settings.Settings``), ``cli`` (the ``tocsin``
command's argparse parsers), ``errors`` (the ``TocsinError`` classes), ``metrics`` (the Prometheus
registry of ``app.observability.metrics``) and ``http_api`` (the API's OpenAPI document, also
written whole as ``openapi.json``).
"""

NONE = "\N{EN DASH}"  # a table cell with nothing to say
