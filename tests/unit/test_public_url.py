"""The installation's own public address (``TOCSIN_PUBLIC_URL``; issue 30, item 2): a federated
credential's default audience comes from it, so two installations never share one. Every
installation that kept the old built-in default (``http://127.0.0.1:8080``) accepted the tokens
meant for any other that kept it: the API and the worker now refuse to start without it, and
``tocsin run`` (``make run``) sets it to its loopback address."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import Settings, get_settings
from cli.main import main

MESSAGE = "TOCSIN_PUBLIC_URL is not set"


class Started(Exception):
    """The entry point went on to start the process (its broker wait, uvicorn, the worker)."""


def _not_started(*_args: object, **_kwargs: object) -> None:
    raise Started


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, restore_logging: None) -> pytest.MonkeyPatch:
    """An environment naming no public URL, in which nothing can really start."""
    import uvicorn

    import streams.worker
    from app.kafka import topics
    from app.observability import logthrottle

    monkeypatch.delenv("TOCSIN_PUBLIC_URL", raising=False)
    monkeypatch.delenv("TOCSIN_DEFAULT_AUDIENCE", raising=False)
    monkeypatch.delenv("TOCSIN_OTLP_ENDPOINT", raising=False)
    monkeypatch.setenv("TOCSIN_VAR_DIR", str(tmp_path))
    # the API's first step (it filters library loggers for the whole process): started from here
    monkeypatch.setattr(logthrottle, "throttle_library_logs", _not_started)
    monkeypatch.setattr(topics, "ensure_topics_when_reachable", _not_started)
    monkeypatch.setattr(uvicorn, "run", _not_started)
    monkeypatch.setattr(streams.worker, "run_worker", _not_started)
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


@pytest.mark.parametrize("command", ["api", "worker"])
def test_the_api_and_the_worker_refuse_to_start_without_a_public_url(
    environment: pytest.MonkeyPatch, command: str
) -> None:
    with pytest.raises(SystemExit) as refused:
        main([command])
    message = str(refused.value.code)
    assert message.startswith(f"tocsin: {MESSAGE}") and "default audience" in message, message


@pytest.mark.parametrize("command", ["api", "worker"])
def test_with_a_public_url_they_start(environment: pytest.MonkeyPatch, command: str) -> None:
    environment.setenv("TOCSIN_PUBLIC_URL", "https://tocsin.example.com")
    with pytest.raises(Started):
        main([command])


def test_the_default_audience_comes_from_the_public_url() -> None:
    assert Settings(public_url="https://tocsin.example.com").effective_default_audience == "https://tocsin.example.com"
    assert Settings(public_url="https://tocsin.example.com/").effective_default_audience == "https://tocsin.example.com"
    explicit = Settings(public_url="https://tocsin.example.com", default_audience="https://aud.example.com")
    assert explicit.effective_default_audience == "https://aud.example.com", "an explicit audience still wins"
    assert Settings().effective_default_audience is None, "no built-in default any more"


@pytest.mark.parametrize("value", ["tocsin.example.com", "ftp://tocsin.example.com", "https://", "https://x/?q=1"])
def test_a_public_url_that_is_not_an_http_url_is_refused_naming_the_setting(value: str) -> None:
    with pytest.raises(ValueError, match="TOCSIN_PUBLIC_URL"):
        Settings(public_url=value)


def test_tocsin_run_gives_its_processes_a_loopback_public_url() -> None:
    from cli.bootstrap import console_base
    from cli.run import process_env

    # by the name the run prints the console at: links e-mailed by the API, the session cookie and
    # WebAuthn's relying party are on the host the browser opened (a browser refuses an IP as RP id)
    assert process_env(Settings(api_port=8123), {})["TOCSIN_PUBLIC_URL"] == "http://localhost:8123"
    assert process_env(Settings(api_host="0.0.0.0"), {})["TOCSIN_PUBLIC_URL"] == "http://localhost:8080"
    assert process_env(Settings(api_host="127.0.0.1"), {})["TOCSIN_PUBLIC_URL"] == "http://localhost:8080"
    assert process_env(Settings(api_host="10.1.2.3"), {})["TOCSIN_PUBLIC_URL"] == "http://10.1.2.3:8080"
    assert process_env(Settings(), {})["TOCSIN_PUBLIC_URL"] == f"{console_base(Settings())}"
    mine = Settings(public_url="https://tocsin.example.com")
    assert process_env(mine, {"TOCSIN_PUBLIC_URL": "https://tocsin.example.com"})["TOCSIN_PUBLIC_URL"] == (
        "https://tocsin.example.com"
    )
