"""The lock files (issue 19, item 3): every dependency pyproject.toml names is pinned to one version
with its hashes, so `make run`, `make test`, CI and the image install exactly what was tested
(`make lock` refreshes them; `make lock UPGRADE=1` takes the newest versions allowed)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _pins(lock: str) -> dict[str, tuple[str, int]]:
    """name → (version, number of hashes) of every entry of a lock file."""
    pins: dict[str, tuple[str, int]] = {}
    for entry in re.split(r"\n(?=[A-Za-z0-9])", (ROOT / lock).read_text()):
        if match := re.match(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==(\S+)", entry):
            pins[match.group(1).lower().replace("_", "-")] = (match.group(2), entry.count("--hash=sha256:"))
    return pins


def test_every_dependency_is_pinned_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    product = {_name(r) for r in project["dependencies"]}
    dev = {_name(r) for r in project["optional-dependencies"]["dev"]}
    prod_lock, dev_lock = _pins("requirements.lock"), _pins("requirements-dev.lock")
    assert product - prod_lock.keys() == set(), "requirements.lock lacks these: make lock"
    assert (product | dev) - dev_lock.keys() == set(), "requirements-dev.lock lacks these: make lock"
    assert [name for name, (_v, hashes) in {**prod_lock, **dev_lock}.items() if hashes == 0] == []


def test_the_image_and_the_tests_install_the_same_versions() -> None:
    prod_lock, dev_lock = _pins("requirements.lock"), _pins("requirements-dev.lock")
    differ = {name: (v, dev_lock[name][0]) for name, (v, _h) in prod_lock.items() if dev_lock[name][0] != v}
    assert differ == {}
