"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) load everything from the API itself (api/docs_pages.py):
no page references another host, every file a page names answers 200 with its media type, and each
page carries a Content-Security-Policy that allows only the API's origin (plus, on ``/docs``, the one
inline script by its hash). A browser then shows both pages under that policy with no request to
another host and no violation but ReDoc's logo.

The app runs in-process without its lifespan (no broker, no database: the pages need neither)."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from api.docs_pages import ASSETS, STATIC_URL
from api.main import create_app
from app.settings import Settings
from devstack.ports import free_port

PAGES = ("/docs", "/redoc")
SOURCE = re.compile(r"""<(?:script|link|img)\b[^>]*?\b(?:src|href)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def app_under_test(tmp_path_factory: pytest.TempPathFactory) -> object:
    return create_app(Settings(var_dir=str(tmp_path_factory.mktemp("var")), access_log=False))


@pytest.fixture(scope="module")
def client(app_under_test: object) -> TestClient:
    return TestClient(app_under_test)  # type: ignore[arg-type]  # not entered: the lifespan does not run


def policy(response: object) -> dict[str, list[str]]:
    """The response's Content-Security-Policy, directive → its sources."""
    header = response.headers["content-security-policy"]  # type: ignore[attr-defined]
    directives = [part.split() for part in header.split(";") if part.strip()]
    return {words[0]: words[1:] for words in directives}


@pytest.mark.parametrize("path", PAGES)
def test_a_page_references_nothing_outside_the_api(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    sources = SOURCE.findall(page.text)
    assert sources, "the page loads its scripts and style sheet"
    for source in sources:
        assert source.startswith("/") and not source.startswith("//"), f"{path} loads {source} from another host"
    assert "http://" not in page.text and "https://" not in page.text  # no CDN, no web fonts


@pytest.mark.parametrize("path", PAGES)
def test_every_file_a_page_names_answers_with_its_media_type(client: TestClient, path: str) -> None:
    expected = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
    for source in SOURCE.findall(client.get(path).text):
        answer = client.get(source)
        assert answer.status_code == 200, source
        assert answer.headers["content-type"].split(";")[0] == expected[Path(source).suffix], source
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert len(answer.content) > 1000, source
    document = client.get("/openapi.json")  # what both pages then load
    assert document.status_code == 200
    assert document.headers["content-type"] == "application/json"


def test_only_the_pages_files_are_served(client: TestClient) -> None:
    for name in ASSETS:
        assert client.get(f"{STATIC_URL}/{name}").status_code == 200
    for name in ("core.py", "..%2Fcore.py", "..%2F..%2Fapi%2Fmain.py", "swagger-ui.js"):
        assert client.get(f"{STATIC_URL}/{name}").status_code == 404, name


@pytest.mark.parametrize("path", PAGES)
def test_each_page_allows_only_the_apis_own_origin(client: TestClient, path: str) -> None:
    page = client.get(path)
    directives = policy(page)
    assert directives["default-src"] == ["'none'"]
    assert directives["connect-src"] == ["'self'"]  # the OpenAPI document, and Swagger UI's "Try it out"
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"]
    for name, sources in directives.items():
        for source in sources:
            assert not re.match(r"^(https?:|\*|[\w-]+\.[\w.-]+)", source), f"{name} allows {source}"
    scripts = directives["script-src"]
    assert "'self'" in scripts
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts
    assert page.headers["x-content-type-options"] == "nosniff"


def test_swagger_ui_runs_its_one_inline_script_by_hash_and_no_inline_style(client: TestClient) -> None:
    page = client.get("/docs")
    inline = re.findall(r"<script>(.*?)</script>", page.text, re.DOTALL)
    assert len(inline) == 1
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    directives = policy(page)
    assert directives["script-src"] == ["'self'", f"'sha256-{digest}'"]
    assert directives["style-src"] == ["'self'"]
    assert '"validatorUrl": null' in page.text  # no badge fetched from an outside validator


def test_redoc_has_no_inline_script(client: TestClient) -> None:
    page = client.get("/redoc")
    assert not re.search(r"<script>", page.text)
    assert policy(page)["script-src"] == ["'self'"]


def test_the_pages_are_not_in_the_openapi_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith(("/docs", "/redoc"))]


@pytest.fixture(scope="module")
def served(app_under_test: object) -> Iterator[str]:
    """The app on a loopback port (uvicorn in a thread, no lifespan), for a browser."""
    port = free_port()
    config = uvicorn.Config(
        app_under_test,  # type: ignore[arg-type]
        host="127.0.0.1",
        port=port,
        lifespan="off",
        ws="none",
        http="h11",
        log_level="warning",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize(("path", "shown"), [("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")])
def test_a_browser_shows_each_page_under_its_policy(served: str, path: str, shown: str) -> None:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is missing: make system-deps (scripts/system-deps.sh) installs it")
        pytest.skip("no /usr/bin/chromium (make system-deps installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            console: list[str] = []
            requested: list[str] = []
            page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: console.append(str(error)))
            page.on("request", lambda request: requested.append(request.url))
            page.goto(served + path)
            page.wait_for_selector(shown, timeout=60_000)
            assert "Tocsin" in page.inner_text(shown)
            page.wait_for_timeout(1000)  # what the page fetches once shown
        finally:
            browser.close()
    # ReDoc's menu asks for Redocly's logo from its CDN; the policy blocks it and ReDoc drops the image
    logo = "https://cdn.redoc.ly/redoc/logo-mini.svg"
    outside = [url for url in requested if not url.startswith((served, "blob:", "data:")) and url != logo]
    assert outside == []
    assert [text for text in console if "logo-mini.svg" not in text] == []
