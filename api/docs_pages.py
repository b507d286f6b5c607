"""The API's own documentation pages: ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), on the OpenAPI
document at ``/openapi.json``.

FastAPI's pages load Swagger UI and ReDoc from a public CDN: an installation without internet access
had no API page, and a script of another site ran on the API's origin, where it could call the API
with a token pasted into "Authorize". Here the scripts, the style sheet and the icon are served by
the API itself under ``/docs/static/`` (the files the fastapi-offline package ships: only its static
files are used), and each page carries a Content-Security-Policy that lets it load nothing from
anywhere else:

- ``/docs``: scripts from the API's origin plus the one inline script FastAPI's page starts Swagger UI
  with, allowed by its SHA-256 (computed from the page served, so it always matches). Swagger UI's
  validator badge, which would send the document's address to an outside validator, is off.
- ``/redoc``: scripts from the API's origin only. ReDoc styles its page by inserting ``<style>``
  elements as it renders, so styles there also allow inline ones (``'unsafe-inline'`` for styles, never
  for scripts), and its search index runs in a worker it starts from a ``blob:`` URL. Its menu asks
  for Redocly's logo from Redocly's CDN: the policy blocks that, and ReDoc leaves the image out.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.resources
import re
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response

DOCS_URL = "/docs"
REDOC_URL = "/redoc"
STATIC_URL = "/docs/static"
# The files the pages load, with their media types (nothing else is served from the folder).
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
    "favicon.png": "image/png",
}
SWAGGER_UI_PARAMETERS = {"validatorUrl": None}  # no badge fetched from an outside validator

_COMMON = (
    "default-src 'none'; connect-src 'self'; img-src 'self' data:; font-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "Cache-Control": "no-cache"}
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def assets_dir() -> Path:
    """The folder of Swagger UI's and ReDoc's files, as the installed fastapi-offline package ships it."""
    return Path(str(importlib.resources.files("fastapi_offline") / "static"))


def _script_hashes(html: str) -> str:
    """The CSP source expressions allowing each inline script of ``html``, by its SHA-256."""
    found = (hashlib.sha256(body.encode("utf-8")).digest() for body in _INLINE_SCRIPT.findall(html))
    return " ".join(f"'sha256-{base64.b64encode(digest).decode('ascii')}'" for digest in found)


def swagger_ui_policy(html: str) -> str:
    return f"{_COMMON}; script-src 'self' {_script_hashes(html)}; style-src 'self'"


def redoc_policy() -> str:
    return f"{_COMMON}; script-src 'self'; style-src 'self' 'unsafe-inline'; worker-src 'self' blob:"


def _text(html: HTMLResponse) -> str:
    return bytes(html.body).decode("utf-8")


def _page(page: str, policy: str) -> HTMLResponse:
    return HTMLResponse(page, headers={**_HEADERS, "Content-Security-Policy": policy})


def install(app: FastAPI) -> None:
    """``/docs``, ``/redoc`` and their files on ``app``, which was created with ``docs_url=None`` and
    ``redoc_url=None`` (FastAPI's own pages would load the CDN's files)."""
    assert app.docs_url is None and app.redoc_url is None, "FastAPI's own documentation pages are on"
    openapi_url = app.openapi_url or "/openapi.json"
    folder = assets_dir()

    @app.get(DOCS_URL, include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        html = get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{STATIC_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{STATIC_URL}/swagger-ui.css",
            swagger_favicon_url=f"{STATIC_URL}/favicon.png",
            oauth2_redirect_url=None,  # bearer tokens only: no OAuth2 flow comes back to the page
            swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
        )
        page = _text(html)
        return _page(page, swagger_ui_policy(page))

    @app.get(REDOC_URL, include_in_schema=False)
    async def redoc() -> HTMLResponse:
        html = get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{STATIC_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{STATIC_URL}/favicon.png",
            with_google_fonts=False,
        )
        return _page(_text(html), redoc_policy())

    @app.get(f"{STATIC_URL}/{{name}}", include_in_schema=False)
    async def asset(name: str) -> Response:
        if name not in ASSETS:
            return Response(status_code=404, headers={"X-Content-Type-Options": "nosniff"})
        return FileResponse(folder / name, media_type=ASSETS[name], headers=_HEADERS)
