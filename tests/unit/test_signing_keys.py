"""The key that signs exchanged tokens: never a public one, created once per data directory
(race-free), and verified together with the previous keys of a rotation."""

from __future__ import annotations

import hmac
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.identity import federated_tokens
from app.identity.signing_keys import (
    DEFAULT_KEY_FILE,
    SigningKeyError,
    generate_key,
    load_signing_keys,
)
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "dev-only-signing-key-change-me"  # what earlier releases signed with by default


def _settings(tmp_path: Path, **changes: object) -> Settings:
    return Settings(var_dir=tmp_path, **changes)  # type: ignore[arg-type]


def _mint(key: bytes | str) -> str:
    raw = key.encode() if isinstance(key, str) else key
    return federated_tokens.mint(
        raw, service_account_id="sa_1", credential_id="cred_1", organization_id="org_1", now=int(time.time())
    )


def test_first_start_creates_a_random_key_file_readable_by_the_owner_only(tmp_path: Path) -> None:
    keys = load_signing_keys(_settings(tmp_path))
    path = tmp_path / DEFAULT_KEY_FILE
    assert keys.created and keys.source == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip().encode() == keys.current
    assert len(keys.current) >= 43 and keys.previous == ()
    assert [p.name for p in tmp_path.iterdir()] == [DEFAULT_KEY_FILE], "no temporary file left behind"


def test_a_restart_reuses_the_key_file(tmp_path: Path) -> None:
    first = load_signing_keys(_settings(tmp_path))
    again = load_signing_keys(_settings(tmp_path))
    assert (again.current, again.created) == (first.current, False)
    assert load_signing_keys(_settings(tmp_path / "elsewhere")).current != first.current, "each install its own"


def test_processes_starting_together_on_one_data_directory_agree_on_one_key(tmp_path: Path) -> None:
    go = tmp_path / "go"
    script = (
        "import sys, time, pathlib\n"
        "from app.identity.signing_keys import read_or_create_key_file\n"
        "go = pathlib.Path(sys.argv[1])\n"
        "while not go.exists(): time.sleep(0.001)\n"
        "key, created = read_or_create_key_file(pathlib.Path(sys.argv[2]))\n"
        "print(key, created)\n"
    )
    path = tmp_path / "shared" / DEFAULT_KEY_FILE
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(go), str(path)], cwd=ROOT, stdout=subprocess.PIPE)
        for _ in range(12)
    ]
    time.sleep(1.0)  # every process is waiting on the same start line
    go.touch()
    results = [proc.communicate(timeout=60)[0].decode().split() for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    assert {key for key, _ in results} == {path.read_text().strip()}
    assert [created for _, created in results].count("True") == 1
    assert sorted(p.name for p in path.parent.iterdir()) == [DEFAULT_KEY_FILE]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_key_from_the_environment_or_an_operators_file_is_used_and_no_file_is_created(tmp_path: Path) -> None:
    value = generate_key()
    keys = load_signing_keys(_settings(tmp_path, token_signing_key=value))
    assert (keys.current, keys.source, keys.created) == (value.encode(), "TOCSIN_TOKEN_SIGNING_KEY", False)
    mounted = tmp_path / "secret" / "key"
    mounted.parent.mkdir()
    mounted.write_text(value + "\n")
    mounted.chmod(0o600)
    assert load_signing_keys(_settings(tmp_path, token_signing_key_file=mounted)).current == value.encode()
    assert not (tmp_path / DEFAULT_KEY_FILE).exists()


def test_an_operators_key_file_that_is_missing_is_an_error_not_a_new_key(tmp_path: Path) -> None:
    with pytest.raises(SigningKeyError, match="cannot read the token signing key file"):
        load_signing_keys(_settings(tmp_path, token_signing_key_file=tmp_path / "not-mounted"))
    assert not (tmp_path / "not-mounted").exists()


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("token_signing_key", PLACEHOLDER, "TOCSIN_TOKEN_SIGNING_KEY is the development placeholder"),
        ("token_signing_key", "s3cret-but-short", "TOCSIN_TOKEN_SIGNING_KEY is shorter than 32 characters"),
        ("token_previous_keys", f"{generate_key()},{PLACEHOLDER}", "PREVIOUS_KEYS: key 2 is the development"),
        ("token_previous_keys", "short", "TOCSIN_TOKEN_PREVIOUS_KEYS: key 1 is shorter than 32"),
    ],
    # ids without the random key: make test's two processes must collect the same tests
    ids=["placeholder", "short", "previous-placeholder", "previous-short"],
)
def test_a_public_or_short_key_in_the_environment_is_refused_at_start(
    tmp_path: Path, setting: str, value: str, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        _settings(tmp_path, **{setting: value})


def test_a_key_and_a_key_file_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="not both"):
        _settings(tmp_path, token_signing_key=generate_key(), token_signing_key_file=tmp_path / "k")


@pytest.mark.parametrize(("content", "message"), [(PLACEHOLDER, "development placeholder"), ("x" * 31, "shorter")])
@pytest.mark.parametrize("which", ["key file", "default file", "previous keys file"])
def test_a_public_or_short_key_in_a_file_is_refused(tmp_path: Path, content: str, message: str, which: str) -> None:
    path = tmp_path / ("previous" if which == "previous keys file" else DEFAULT_KEY_FILE)
    path.write_text(content + "\n")
    changes = {
        "key file": {"token_signing_key_file": path},
        "default file": {},
        "previous keys file": {"token_previous_keys_file": path},
    }[which]
    with pytest.raises(SigningKeyError, match=f"{path} .*{message}"):
        load_signing_keys(_settings(tmp_path, **changes))


def test_the_command_line_refuses_the_placeholder_with_a_clear_message(tmp_path: Path) -> None:
    for command in ("api", "worker", "run"):
        out = subprocess.run(
            [sys.executable, "-m", "cli", command],
            cwd=ROOT,
            env={**os.environ, "TOCSIN_VAR_DIR": str(tmp_path), "TOCSIN_TOKEN_SIGNING_KEY": PLACEHOLDER},
            capture_output=True,
            timeout=60,
        )
        assert out.returncode != 0
        err = out.stderr.decode()
        assert "tocsin: configuration refused: TOCSIN_TOKEN_SIGNING_KEY is the development placeholder" in err, err
        assert "Traceback" not in err
    assert not (tmp_path / DEFAULT_KEY_FILE).exists()


def test_a_short_key_file_stops_the_api_with_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / DEFAULT_KEY_FILE).write_text("too-short\n")
    out = subprocess.run(
        [sys.executable, "-m", "cli", "api"],
        cwd=ROOT,
        env={**os.environ, "TOCSIN_VAR_DIR": str(tmp_path), "TOCSIN_PUBLIC_URL": "http://127.0.0.1:8080"},
        capture_output=True,
        timeout=60,
    )
    err = out.stderr.decode()
    assert out.returncode != 0 and "Traceback" not in err, err
    assert f"the token signing key from {tmp_path / DEFAULT_KEY_FILE} is shorter than 32 characters" in err


def test_tokens_signed_with_a_previous_key_verify_and_unknown_keys_do_not(tmp_path: Path) -> None:
    old, new, other = generate_key(), generate_key(), generate_key()
    previous_file = tmp_path / "previous"
    previous_file.write_text(f"{generate_key()}\n\n{old}\n")
    keys = load_signing_keys(_settings(tmp_path, token_signing_key=new, token_previous_keys_file=previous_file))
    assert keys.current == new.encode() and old.encode() in keys.previous
    assert federated_tokens.verify(keys.verifying, _mint(new)) is not None
    assert federated_tokens.verify(keys.verifying, _mint(old)) is not None, "issued before the rotation"
    assert federated_tokens.verify(keys.verifying, _mint(other)) is None
    assert federated_tokens.verify(keys.verifying, _mint(PLACEHOLDER)) is None
    after = load_signing_keys(_settings(tmp_path, token_signing_key=new))
    assert federated_tokens.verify(after.verifying, _mint(old)) is None, "dropped from the previous keys"


def test_previous_keys_from_the_environment_are_comma_separated_and_the_current_key_is_not_repeated(
    tmp_path: Path,
) -> None:
    a, b, current = generate_key(), generate_key(), generate_key()
    keys = load_signing_keys(
        _settings(tmp_path, token_signing_key=current, token_previous_keys=f" {a} ,{b},,{a},{current}")
    )
    assert keys.previous == (a.encode(), b.encode())
    assert keys.verifying == (current.encode(), a.encode(), b.encode())


def test_a_token_signed_with_the_placeholder_as_an_attacker_would_is_not_verified(tmp_path: Path) -> None:
    keys = load_signing_keys(_settings(tmp_path))
    payload = federated_tokens._b64(b'{"sa":"sa_1","cred":"cred_1","org":"org_1","exp":4102444800,"jti":"x"}')
    signature = federated_tokens._b64(hmac.digest(PLACEHOLDER.encode(), payload.encode(), "sha256"))
    forged = f"tcf_{payload}.{signature}"
    assert federated_tokens.verify((PLACEHOLDER.encode(),), forged) is not None, "the forgery is well made"
    assert federated_tokens.verify(keys.verifying, forged) is None
