"""The console in a real browser (issue 34): Debian's chromium driven by Playwright
(``executable_path``; no browser download). Sign-in with password + TOTP, with WebAuthn through
Chromium's virtual authenticator (DevTools protocol), with a magic link read from the SMTP sink; an
incident made by a publish appears in the open list by itself, is acknowledged (by keyboard) and
resolved; a viewer cannot resolve; axe-core finds no WCAG 2.1 AA violation on the incident pages.

One browser, one stack (API + worker on the session's broker) and one SMTP sink for the module;
no sleeps: Playwright waits for what the page shows, the rest polls with deadlines."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from email import message_from_bytes
from pathlib import Path
from typing import Any

import httpx
import pyotp
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from devstack.kafka import LocalKafka
from devstack.ports import free_port
from devstack.smtp_sink import SmtpSink
from tests.support.console import PASSWORD, Person, person
from tests.support.scaling import stop_checked
from tests.support.stack import Stack, wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


@pytest.fixture(scope="module")
def mail_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    directory = tmp_path_factory.mktemp("mail")
    port = free_port()
    sink = SmtpSink(directory, "127.0.0.1", port)
    sink.start()
    yield directory, port
    sink.stop()


@pytest.fixture(scope="module")
def stack(kafka: LocalKafka, tmp_path_factory: pytest.TempPathFactory, mail_dir: tuple[Path, int]) -> Iterator[Stack]:
    s = Stack(tmp_path_factory.mktemp("console"), kafka.bootstrap, extra_env={"TOCSIN_SMTP_PORT": str(mail_dir[1])})
    try:
        s.start()
        yield s
    finally:
        stop_checked([s])  # as stack_factory: no record lost, no ERROR in the worker's log


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: make system-deps (scripts/system-deps.sh) installs it")
    with sync_playwright() as pw:
        yield _launch(pw)


def _launch(pw: Playwright) -> Browser:
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])


def console_url(stack: Stack) -> str:
    """The console by name: a browser refuses an IP address as a WebAuthn RP id (and the API takes
    ``localhost`` as the RP id of its loopback public URL)."""
    return f"http://localhost:{stack.api_port}/console"


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1100, "height": 720}, locale="en-US")
    ctx.set_default_timeout(20_000)
    yield ctx
    ctx.close()


def sign_in_with_password(page: Page, stack: Stack, who: Person) -> None:
    page.goto(f"{console_url(stack)}/incidents")
    expect(page).to_have_url(re.compile(r"/console/signin\?next="))
    page.get_by_label("E-mail", exact=True).first.fill(who.email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def axe_clean(page: Page) -> None:
    result = Axe().run(page, options=WCAG_AA)
    assert result.violations_count == 0, result.generate_report()


def test_password_and_totp_signin(stack: Stack, context: BrowserContext, tmp_path: Path) -> None:
    who = person(stack, "viewer")
    api = httpx.post(
        f"{stack.base_url}/v1/signin/password",
        json={"organization_id": stack.org, "email": who.email, "password": PASSWORD},
    ).json()["session"]["access_token"]
    bearer = {"Authorization": f"Bearer {api}"}
    secret = httpx.post(f"{stack.base_url}/v1/signin/totp_enrolment", json={}, headers=bearer).json()["secret"]
    confirm = {"code": pyotp.TOTP(secret).now()}
    assert httpx.post(f"{stack.base_url}/v1/signin/totp_enrolment:confirm", json=confirm, headers=bearer).is_success
    page = context.new_page()
    sign_in_with_password(page, stack, who)
    expect(page.get_by_role("heading", name="Second step")).to_be_visible()
    page.get_by_label("Code from the authenticator app").fill(pyotp.TOTP(secret).at(time.time() + 30))
    page.get_by_role("button", name="Continue").first.click()
    expect(page.get_by_role("heading", name="Incidents")).to_be_visible()
    expect(page.get_by_text(f"Signed in as {who.email}")).to_be_visible()
    page.screenshot(path=tmp_path / "totp-signed-in.png")


def test_webauthn_signin_with_chromiums_virtual_authenticator(
    stack: Stack, context: BrowserContext, tmp_path: Path
) -> None:
    who = person(stack, "viewer")
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    authenticator = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )["authenticatorId"]
    sign_in_with_password(page, stack, who)
    expect(page.get_by_role("heading", name="Incidents")).to_be_visible()
    page.get_by_role("link", name="Account").click()
    page.get_by_label("Name of the key").fill("virtual key")
    page.get_by_role("button", name="Add a security key").click()
    expect(page.get_by_text("virtual key")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    sign_in_with_password(page, stack, who)
    page.get_by_role("button", name="Use a security key or passkey").click()
    expect(page.get_by_role("heading", name="Incidents")).to_be_visible()
    page.screenshot(path=tmp_path / "webauthn-signed-in.png")
    [credential] = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
    assert credential["signCount"] >= 1  # the counter the server checked went up
    me = httpx.post(
        f"{stack.base_url}/v1/signin/password",
        json={"organization_id": stack.org, "email": who.email, "password": PASSWORD},
    )
    assert me.json()["status"] == "second_factor_required" and me.json()["methods"] == ["webauthn"]


def test_magic_link_read_from_the_smtp_sink(stack: Stack, context: BrowserContext, mail_dir: tuple[Path, int]) -> None:
    who = person(stack, "viewer", password=None)
    with stack.client() as owner:
        assert owner.put("/iam/authentication_policy", json={"magic_link_enabled": True}).status_code == 200
    try:
        page = context.new_page()
        page.goto(f"{console_url(stack)}/signin")
        page.get_by_label("E-mail", exact=True).nth(1).fill(who.email)
        page.get_by_role("button", name="Send the link").click()
        expect(page.get_by_role("status")).to_contain_text("an e-mail is on its way")
        link = wait_for(lambda: _link_to(mail_dir[0], who.email), 30, "the sign-in e-mail")
        page.goto(link)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="Incidents")).to_be_visible()
        page.get_by_role("button", name="Sign out").click()
        page.goto(link)  # the link works once
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_contain_text("unknown or used")
    finally:
        with stack.client() as owner:
            owner.put("/iam/authentication_policy", json={})


def _link_to(directory: Path, to: str) -> str | None:
    for path in sorted(directory.glob("*.eml")):
        message = message_from_bytes(path.read_bytes())
        if to in message["To"]:
            body = message.get_payload(decode=True).decode()  # type: ignore[union-attr]
            return next((w for w in body.split() if "/console/signin/link?token=" in w), None)
    return None


@pytest.fixture(scope="module")
def published(stack: Stack) -> dict[str, Any]:
    """A topic whose ACTUAL workflow's operation book names a viewer as member, and one publish."""
    viewer = person(stack, "viewer")
    with stack.client() as api:
        topic = {"key": "quake-ui", "name_en": "Earthquake", "name_ja": "地震"}
        assert api.post("/workflow_topics", json=topic).status_code == 201
        book = api.post(
            "/operation_books",
            json={"name": "Quake", "incident_title_template": "Quake: {event.name}", "member_user_ids": [viewer.id]},
        )
        assert book.status_code == 201, book.text
        action = {"type": "RUN_OPERATION_BOOK", "operation_book_id": book.json()["id"]}
        flow = {"name": "Quake alert", "topic": "quake-ui", "mode": "ACTUAL", "actions": [action]}
        assert api.post("/workflows", json=flow).status_code == 201
    return {"viewer": viewer, "owner": person(stack, "owner")}


def publish(stack: Stack, name: str) -> str:
    with stack.client() as api:
        body = {"status": "ACTUAL", "data": {"magnitude": 6.1}, "event": {"name": name}}
        r = api.post("/workflow_topics/quake-ui/publish", json=body)
        assert r.status_code == 202, r.text
        event_id: str = r.json()["id"]
        return event_id


def test_published_incident_appears_is_acknowledged_and_resolved(
    stack: Stack, context: BrowserContext, published: dict[str, Any], tmp_path: Path
) -> None:
    page = context.new_page()
    sign_in_with_password(page, stack, published["owner"])
    expect(page.get_by_role("heading", name="Incidents")).to_be_visible()
    event_id = publish(stack, "M6.1 Tohoku")
    row = page.locator("tr", has_text="Quake: M6.1 Tohoku")
    expect(row).to_be_visible(timeout=60_000)  # the list refreshed itself: no reload
    expect(row).to_contain_text("Open")
    axe_clean(page)
    page.screenshot(path=tmp_path / "incidents.png")
    row.get_by_role("link").click()
    expect(page.get_by_role("heading", name="Quake: M6.1 Tohoku")).to_be_visible()
    axe_clean(page)
    # by keyboard: the skip link first, then on to the Acknowledge button
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    acknowledge = page.get_by_role("button", name="Acknowledge")
    for _ in range(30):
        page.keyboard.press("Tab")
        if acknowledge.evaluate("b => b === document.activeElement"):
            break
    expect(acknowledge).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".status")).to_have_text("Acknowledged")
    page.get_by_role("button", name="Resolve").click()
    expect(page.locator(".status")).to_have_text("Resolved")
    expect(page.locator(".timeline")).to_contain_text("ACKNOWLEDGED")
    expect(page.locator(".timeline")).to_contain_text("RESOLVED")
    page.screenshot(path=tmp_path / "incident.png", full_page=True)
    page.get_by_role("link", name=event_id).click()
    expect(page.get_by_role("heading", name="Event trace")).to_be_visible()
    expect(page.get_by_role("heading", name="control")).to_be_visible()
    _keep_for_docs(tmp_path, {"incidents.png": "console-incidents.png", "incident.png": "console-incident.png"})


def test_a_viewer_cannot_resolve(
    stack: Stack, context: BrowserContext, published: dict[str, Any], browser: Browser
) -> None:
    publish(stack, "M5.2 Hokkaido")
    ja = browser.new_context(locale="ja-JP", extra_http_headers={"Accept-Language": "ja"})
    try:
        page = ja.new_page()
        sign_in_with_password_ja(page, stack, published["viewer"])
        row = page.locator("tr", has_text="Quake: M5.2 Hokkaido")
        expect(row).to_be_visible(timeout=60_000)
        expect(row).to_contain_text("地震")
        row.get_by_role("link").click()
        expect(page.get_by_text("このインシデントは閲覧のみ可能です。")).to_be_visible()
        expect(page.get_by_role("button", name="解決する")).to_have_count(0)
        axe_clean(page)
    finally:
        ja.close()


def sign_in_with_password_ja(page: Page, stack: Stack, who: Person) -> None:
    page.goto(f"{console_url(stack)}/incidents")
    page.get_by_label("メールアドレス", exact=True).first.fill(who.email)
    page.get_by_label("パスワード", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="サインイン").click()
    expect(page.get_by_role("heading", name="インシデント")).to_be_visible()


def _keep_for_docs(tmp_path: Path, names: dict[str, str]) -> None:
    """With TOCSIN_DOC_SCREENSHOTS=1, the screenshots the README shows are refreshed in docs/images."""
    if os.environ.get("TOCSIN_DOC_SCREENSHOTS") == "1":
        for source, target in names.items():
            shutil.copyfile(tmp_path / source, DOC_IMAGES / target)
