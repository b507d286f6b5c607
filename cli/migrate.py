"""``tocsin migrate``: bring the database schema up to date."""

from __future__ import annotations

from app.settings import Settings
from cli.common import say


def cmd_migrate(settings: Settings) -> None:
    from app.store.db import migrate

    migrate(settings.effective_database_url)
    say("database migrated")
