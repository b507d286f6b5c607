"""``tocsin bootstrap --org NAME``: an organization with an owner account (also ``tocsin run``'s first start)."""

from __future__ import annotations

import asyncio
import json

from app.settings import Settings
from cli.common import say
from cli.migrate import cmd_migrate


def console_base(settings: Settings) -> str:
    """Where people reach the API (and its console): TOCSIN_PUBLIC_URL, else the local listener."""
    return (settings.public_url or f"http://localhost:{settings.api_port}").rstrip("/")


async def bootstrap_organization(
    settings: Settings, org_name: str, only_if_empty: bool, owner_email: str = ""
) -> dict[str, str] | None:
    """The organization, its owner service account (and token), and its owner person: a user with the
    owner role and a one-time link (7 days) to choose a password and sign in to the console."""
    from app.store.accounts import bootstrap, count_organizations
    from app.store.db import create_engine, sessionmaker
    from app.store.people import OWNER_EMAIL, create_owner_user

    engine = create_engine(settings.effective_database_url)
    try:
        async with sessionmaker(engine).begin() as session:
            if only_if_empty and await count_organizations(session):
                return None
            created = await bootstrap(session, org_name)
            user, _row, token = await create_owner_user(session, created["organization_id"], owner_email or OWNER_EMAIL)
            return {
                **created,
                "owner_user_id": user.id,
                "owner_email": user.email or "",
                "owner_signin_link": f"{console_base(settings)}/console/invitation?token={token}",
            }
    finally:
        await engine.dispose()


def cmd_bootstrap(settings: Settings, org_name: str, only_if_empty: bool = False, owner_email: str = "") -> None:
    """Print the new organization's JSON line (its token and the owner's sign-in link are shown only
    here). With ``only_if_empty`` and an organization already there, create nothing and say so on
    stderr (exit 0)."""
    cmd_migrate(settings)
    created = asyncio.run(bootstrap_organization(settings, org_name, only_if_empty, owner_email))
    if created is None:
        say("an organization exists already; none created (its owner's token was printed when it was)")
        return
    print(json.dumps(created), flush=True)
    say(f"the owner ({created['owner_email']}) chooses a password and signs in at {created['owner_signin_link']}")
