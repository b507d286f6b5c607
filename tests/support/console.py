"""People and console sessions for the console's tests (HTTP and browser)."""

from __future__ import annotations

import itertools
import re
import time
from typing import NamedTuple

import httpx

from tests.support.stack import Stack

PASSWORD = "correct horse battery staple"
_people = itertools.count(1)


class Person(NamedTuple):
    email: str
    id: str


def person(stack: Stack, role: str | None, password: str | None = PASSWORD) -> Person:
    """A user of the stack's organization with ``role`` on it and, by invitation, a password."""
    email = f"p{next(_people)}-{time.monotonic_ns()}@example.com"
    with stack.client() as owner:
        r = owner.post("/users", json={"email": email, "display_name": f"Person {email[:6]}"})
        assert r.status_code == 201, r.text
        user_id = r.json()["id"]
        if role:
            binding = {"resource": f"crn:tocsin:organizations:{stack.org}", "role_id": role}
            assert owner.put(f"/users/{user_id}/iam", json={"bindings": [binding]}).status_code == 200
        if password:
            token = owner.post(f"/users/{user_id}/signin_invitation").json()["token"]
            accept = httpx.post(
                f"{stack.base_url}/v1/signin/invitation:accept", json={"token": token, "new_password": password}
            )
            assert accept.status_code == 204, accept.text
    return Person(email, user_id)


def console(stack: Stack, **headers: str) -> httpx.Client:
    """A browser-like client of the console: cookies kept, redirects not followed."""
    return httpx.Client(base_url=f"{stack.base_url}/console", headers=headers, timeout=30, follow_redirects=False)


def signed_in(stack: Stack, who: Person, **headers: str) -> httpx.Client:
    """A console client whose password sign-in went through the console's own form."""
    client = console(stack, **headers)
    r = client.post("/signin/password", data={"organization_id": stack.org, "email": who.email, "password": PASSWORD})
    assert r.status_code == 303 and r.headers["location"] == "/console/incidents", r.text
    # the cookie is Secure: http.cookiejar keeps it from plain http, as a browser would not from 127.0.0.1
    # (a browser treats loopback as secure), so it is sent by hand
    cookie = next(h for h in r.headers.get_list("set-cookie") if h.startswith("tocsin_session="))
    client.headers["Cookie"] = cookie.split(";", 1)[0]
    return client


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)
