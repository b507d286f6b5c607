"""``tocsin migrate``: bring the database schema up to date."""

from __future__ import annotations

from app.cli.common import say
from app.settings import Settings


def cmd_migrate(settings: Settings) -> None:
    from app.store.db import migrate

    migrate(settings.effective_database_url)
    say("database migrated")
