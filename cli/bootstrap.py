"""``tocsin bootstrap --org NAME``: an organization with an owner account (also ``tocsin run``'s first start)."""

from __future__ import annotations

import asyncio
import json

from app.settings import Settings
from cli.common import say
from cli.migrate import cmd_migrate


async def bootstrap_organization(settings: Settings, org_name: str, only_if_empty: bool) -> dict[str, str] | None:
    from app.store.accounts import bootstrap, count_organizations
    from app.store.db import create_engine, sessionmaker

    engine = create_engine(settings.effective_database_url)
    try:
        async with sessionmaker(engine).begin() as session:
            if only_if_empty and await count_organizations(session):
                return None
            return await bootstrap(session, org_name)
    finally:
        await engine.dispose()


def cmd_bootstrap(settings: Settings, org_name: str, only_if_empty: bool = False) -> None:
    """Print the new organization's JSON line (its token is shown only here). With ``only_if_empty``
    and an organization already there, create nothing and say so on stderr (exit 0)."""
    cmd_migrate(settings)
    created = asyncio.run(bootstrap_organization(settings, org_name, only_if_empty=only_if_empty))
    if created is None:
        say("an organization exists already; none created (its owner's token was printed when it was)")
        return
    print(json.dumps(created), flush=True)
