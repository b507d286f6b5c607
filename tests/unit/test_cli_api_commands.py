"""The commands for people at a terminal (issue 33, item 5), against ``httpx.MockTransport``: where
the URL, token and organization come from (the environment over the profile file, a readable file
refused), and how ``tocsin publish`` reads its input (one JSON object: a publish; an array or NDJSON:
batches, progress on stderr, a refused batch named by its input lines)."""

from __future__ import annotations

import io
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from cli.dead_letters import cmd_dead_letters_replay
from cli.events import cmd_events_show
from cli.profile import ProfileError, Target, load_target
from cli.publish import cmd_publish

TARGET = Target("http://tocsin.test", "tcs_token", "org_1")


def _profiles(tmp_path: Path, text: str, mode: int = 0o600) -> dict[str, str]:
    path = tmp_path / "profiles.toml"
    path.write_text(text)
    path.chmod(mode)
    return {"TOCSIN_PROFILE_FILE": str(path)}


def test_the_environment_wins_field_by_field_over_the_profile(tmp_path: Path) -> None:
    env = _profiles(tmp_path, '[default]\nurl = "http://a/"\ntoken = "tcs_a"\norganization = "org_a"\n')
    assert load_target(env=env) == Target("http://a", "tcs_a", "org_a")
    assert load_target(env={**env, "TOCSIN_ORG": "org_b"}) == Target("http://a", "tcs_a", "org_b")
    every = {"TOCSIN_URL": "http://e", "TOCSIN_TOKEN": "tcs_e", "TOCSIN_ORG": "org_e"}
    assert load_target(env={**every, "TOCSIN_PROFILE_FILE": str(tmp_path / "none.toml")}) == Target(
        "http://e", "tcs_e", "org_e"
    )


def test_a_named_profile_is_read_and_a_missing_one_said(tmp_path: Path) -> None:
    env = _profiles(tmp_path, '[staging]\nurl = "http://s"\ntoken = "tcs_s"\norganization = "org_s"\n')
    assert load_target("staging", env=env).url == "http://s"
    with pytest.raises(ProfileError, match=r"no profile \[prod\]"):
        load_target("prod", env=env)
    with pytest.raises(ProfileError, match="set TOCSIN_URL, TOCSIN_TOKEN, TOCSIN_ORG"):
        load_target(env=env)  # [default] absent, nothing in the environment


def test_a_profile_file_others_may_read_is_refused(tmp_path: Path) -> None:
    env = _profiles(tmp_path, '[default]\ntoken = "tcs_a"\n', mode=0o644)
    with pytest.raises(ProfileError, match="chmod 600"):
        load_target(env=env)


class Api:
    """A mock API answering publishes with ids and refusing requests whose data has ``bad``."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.count = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        assert request.headers["authorization"] == "Bearer tcs_token"
        if request.url.path.endswith("/publish"):
            self.count += 1
            return httpx.Response(202, json={"id": f"evt_{self.count}"})
        items = [orjson.loads(line) for line in request.content.splitlines()]
        refused = [
            {"index": i, "fields": [{"field": "data", "message": "bad"}]} for i, x in enumerate(items) if "bad" in x
        ]
        if refused:
            return httpx.Response(422, json={"code": "VAL-001", "message": "refused", "details": {"items": refused}})
        ids = [f"evt_{self.count + i + 1}" for i in range(len(items))]
        self.count += len(items)
        return httpx.Response(202, json={"ids": ids})


def _run(body: bytes, **kw: Any) -> tuple[Api, str, str]:
    api, out, err = Api(), io.StringIO(), io.StringIO()
    cmd_publish(
        TARGET, "quake", "-", stdin=io.BytesIO(body), out=out, err=err, transport=httpx.MockTransport(api), **kw
    )
    return api, out.getvalue(), err.getvalue()


def test_ndjson_streams_through_batch_publishes_with_progress() -> None:
    body = b"".join(orjson.dumps({"status": "ACTUAL", "data": {"n": n}}) + b"\n\n" for n in range(5))
    api, out, err = _run(body, batch_size=2)
    assert [r.url.path for r in api.requests] == ["/v1/organizations/org_1/workflow_topics/quake/publish:batch"] * 3
    assert [r.headers["content-type"] for r in api.requests] == ["application/x-ndjson"] * 3
    assert out.split() == [f"evt_{n}" for n in range(1, 6)]
    assert err.splitlines() == ["published 2 events", "published 4 events", "published 5 events"]


def test_one_json_object_is_one_publish_and_an_array_a_batch() -> None:
    api, out, _err = _run(b'{\n  "status": "ACTUAL",\n  "data": {}\n}\n')
    assert [r.url.path.rsplit("/", 1)[1] for r in api.requests] == ["publish"] and out == "evt_1\n"
    api, out, _err = _run(orjson.dumps([{"status": "ACTUAL", "data": {}}] * 3))
    assert [r.url.path.rsplit("/", 1)[1] for r in api.requests] == ["publish:batch"] and len(out.split()) == 3


def test_a_refused_batch_names_its_input_lines_and_what_was_published_before() -> None:
    lines = [{"status": "ACTUAL", "data": {}}] * 3 + [{"bad": 1, "data": {}}]
    body = b"".join(orjson.dumps(x) + b"\n" for x in lines)
    with pytest.raises(SystemExit) as refused:
        _run(body, batch_size=2)
    said = str(refused.value)
    assert "lines 3-4 was refused" in said and "(2 events of earlier batches were published)" in said
    assert "line 4: data: bad" in said


@pytest.mark.parametrize("size", [0, 1001, 5000])
def test_a_batch_size_the_server_would_refuse_is_refused_before_sending(size: int) -> None:
    """``--batch-size 5000`` was taken (up to 10,000) where the server takes 1,000 a batch: each batch
    was then refused with 422 after the ones before it. Now refused at once, naming the bound."""
    api = Api()
    with pytest.raises(SystemExit, match=r"between 1 and 1000.*TOCSIN_MAX_PUBLISH_BATCH_ITEMS.*nothing was sent"):
        cmd_publish(
            TARGET, "quake", "-", batch_size=size, stdin=io.BytesIO(b'{"status": "ACTUAL", "data": {}}\n'),
            out=io.StringIO(), err=io.StringIO(), transport=httpx.MockTransport(api),
        )  # fmt: skip
    assert api.requests == []


def test_the_largest_batch_size_the_server_takes_is_sent_whole() -> None:
    api, out, _err = _run(b"".join(orjson.dumps({"status": "ACTUAL", "data": {"n": n}}) + b"\n" for n in range(1001)),
                          batch_size=1000)  # fmt: skip
    assert [len(r.content.splitlines()) for r in api.requests] == [1000, 1]
    assert len(out.split()) == 1001


def test_a_server_taking_fewer_requests_a_batch_is_said_with_the_remedy() -> None:
    def small_server(request: httpx.Request) -> httpx.Response:
        field = {"field": "", "message": "more than 100 publish requests (TOCSIN_MAX_PUBLISH_BATCH_ITEMS)",
                 "type": "limit_exceeded"}  # fmt: skip
        return httpx.Response(
            422, json={"code": "VAL-001", "message": field["message"], "details": {"fields": [field]}}
        )

    body = b"".join(orjson.dumps({"status": "ACTUAL", "data": {}}) + b"\n" for _ in range(3))
    with pytest.raises(SystemExit) as refused:
        cmd_publish(TARGET, "quake", "-", stdin=io.BytesIO(body), out=io.StringIO(), err=io.StringIO(),
                    transport=httpx.MockTransport(small_server))  # fmt: skip
    assert "more than 100 publish requests" in str(refused.value)
    assert "give a smaller --batch-size" in str(refused.value)


def test_input_that_is_no_json_is_refused_before_sending() -> None:
    with pytest.raises(SystemExit, match="neither JSON nor NDJSON"):
        _run(b"status=ACTUAL\n")


@pytest.mark.parametrize("given", ["../incidents", "..", ".", "a/b?c#d", "x%2Fy"])
def test_an_id_from_the_command_line_stays_one_path_segment(given: str) -> None:
    """``tocsin events show ../incidents`` read ``GET …/incidents`` (outside attacker): each id is quoted
    whole into its one segment, for every command that puts one in a path."""
    seen: list[httpx.Request] = []

    def api(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith(":replay"):
            return httpx.Response(200, json={"status": "PENDING"})
        if request.url.path.endswith("/publish"):
            return httpx.Response(202, json={"id": "evt_1"})
        return httpx.Response(200, json={"id": "evt_1", "steps": []})

    transport = httpx.MockTransport(api)
    cmd_events_show(TARGET, given, out=io.StringIO(), transport=transport)
    cmd_dead_letters_replay(TARGET, [given], out=io.StringIO(), transport=transport)
    body = io.BytesIO(b'{\n  "status": "ACTUAL",\n  "data": {}\n}\n')
    cmd_publish(TARGET, given, "-", stdin=body, out=io.StringIO(), err=io.StringIO(), transport=transport)
    org = "/v1/organizations/org_1"
    one = urllib.parse.quote(given, safe="") if given not in (".", "..") else "%2E" * len(given)
    assert [r.url.raw_path.decode() for r in seen] == [
        f"{org}/events/{one}",
        f"{org}/dead_letters/{one}:replay",
        f"{org}/workflow_topics/{one}/publish",
    ]
