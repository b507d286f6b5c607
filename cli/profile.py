"""Where the commands for people at a terminal (``tocsin publish``, ``events``, ``dead-letters``) find
the API: the environment, else a profile file.

``TOCSIN_URL`` (the API's base URL), ``TOCSIN_TOKEN`` (an access token) and ``TOCSIN_ORG`` (the
organization id) win; what they leave unset comes from the profile ``--profile`` (or
``TOCSIN_PROFILE``, default ``default``) of the TOML file ``TOCSIN_PROFILE_FILE`` (default
``~/.config/tocsin/profiles.toml``)::

    [default]
    url = "http://127.0.0.1:8080"
    token = "tcs_…"
    organization = "org_…"

The file holds a token: it is refused when others may read it (``chmod 600``), as ssh refuses a key.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.errors import TocsinError

DEFAULT_FILE = Path("~/.config/tocsin/profiles.toml")
_FIELDS = (("url", "TOCSIN_URL"), ("token", "TOCSIN_TOKEN"), ("organization", "TOCSIN_ORG"))


@dataclass(frozen=True, slots=True)
class Target:
    """The API a command talks to, as whom, in which organization."""

    url: str
    token: str
    organization: str


class ProfileError(TocsinError):
    """The API's address, token or organization is missing or the profile file is unusable: set
    TOCSIN_URL, TOCSIN_TOKEN and TOCSIN_ORG, or write them into the profile file (mode 600)."""


def profile_file(env: Mapping[str, str]) -> Path:
    return Path(env.get("TOCSIN_PROFILE_FILE") or DEFAULT_FILE).expanduser()


def _profile(path: Path, name: str, explicit: bool) -> dict[str, str]:
    if not path.is_file():
        if explicit:
            raise ProfileError(f"profile {name!r} asked for, but there is no profile file {path}")
        return {}
    if path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ProfileError(f"{path} holds a token and others may read it: chmod 600 {path}")
    try:
        profiles = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path} is not TOML: {exc}") from None
    section = profiles.get(name)
    if section is None:
        if explicit:
            raise ProfileError(f"{path} has no profile [{name}]")
        return {}
    if not isinstance(section, dict):
        raise ProfileError(f"[{name}] of {path} is not a table")
    return {k: str(v) for k, v in section.items() if k in {f for f, _e in _FIELDS}}


def load_target(profile: str | None = None, env: Mapping[str, str] | None = None) -> Target:
    """The target the environment and the profile file give (the environment wins field by field)."""
    env = os.environ if env is None else env
    name = profile or env.get("TOCSIN_PROFILE") or "default"
    explicit = profile is not None or "TOCSIN_PROFILE" in env
    values: dict[str, str] = {}
    if not all(env.get(variable) for _f, variable in _FIELDS):
        values = _profile(profile_file(env), name, explicit)
    for field, variable in _FIELDS:
        if env.get(variable):
            values[field] = env[variable]
    missing = [variable for field, variable in _FIELDS if not values.get(field)]
    if missing:
        raise ProfileError(
            f"set {', '.join(missing)} (or {', '.join(f for f, v in _FIELDS if v in missing)} "
            f"in [{name}] of {profile_file(env)})"
        )
    return Target(values["url"].rstrip("/"), values["token"], values["organization"])
