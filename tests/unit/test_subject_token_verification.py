"""Token exchange, the subject token (spec: Authentication 4, Errors): every bad token is refused
with the spec's error and the check the exchange log names, verified by PyJWT with the algorithms
of the key the issuer's JWKS holds. In-process, with an in-memory JWKS: the same cases over HTTP
against a real issuer are in tests/api/test_federation.py.

The cases marked "PyJWT differs" pin today's answer where PyJWT alone would answer otherwise."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.iam.conditions import compile_condition
from app.identity.exchange import (
    MAX_SUBJECT_TOKEN_BYTES,
    CredentialConfig,
    ExchangeFailure,
    verify_subject_token,
)
from app.identity.jwks import JwksCache
from tests.support.oidc_issuer import b64url, compact, corrupt_segment, key_confusion_token, sign_jws, unsigned_token

ISSUER = "https://issuer.test/ci"
AUDIENCE = "https://tocsin.test"
SUBJECT = "repo:o/r:ref:refs/heads/main"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
FOREIGN_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
NOW = int(time.time())  # the tables are built at import: their times hold for hours, not seconds
HOURS = 3600


def _jwk(key: Any, kid: str, algorithm: type[jwt.algorithms.Algorithm], **extra: str) -> dict[str, Any]:
    return {**json.loads(algorithm.to_jwk(key.public_key())), "kid": kid, "use": "sig", **extra}


JWKS = {
    "keys": [
        _jwk(RSA_KEY, "rsa", jwt.algorithms.RSAAlgorithm, alg="RS256"),
        _jwk(EC_KEY, "ec", jwt.algorithms.ECAlgorithm),
    ]
}


def _credential(condition: str | None = None) -> CredentialConfig:
    return CredentialConfig(
        id="cred_test",
        organization_id="org_test",
        service_account_id="sa_test",
        issuer_url=ISSUER,
        audience=AUDIENCE,
        subject_filter="repo:o/r:*",
        jwks_uri="https://issuer.test/jwks",
        condition=compile_condition(condition) if condition else None,
        active=True,
    )


def _jwks(document: dict[str, Any] = JWKS) -> JwksCache:
    async def fetch(_url: str) -> dict[str, Any]:
        return document

    return JwksCache(fetch)


def claims(**changes: Any) -> dict[str, Any]:
    """Good claims, with ``changes`` (a value of ``...`` removes the claim)."""
    good: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": SUBJECT,
        "iat": NOW,
        "nbf": NOW,
        "exp": NOW + 6 * HOURS,
    }
    good.update(changes)
    return {k: v for k, v in good.items() if v is not ...}


def token(payload: dict[str, Any] | None = None, *, alg: str = "RS256", key: Any = None, **header: Any) -> str:
    """Signed with ``alg`` (RSA_KEY or EC_KEY by family) whatever ``header`` says; kid by key."""
    if key is None:
        key = EC_KEY if alg.startswith("ES") else RSA_KEY
    full = {"alg": alg, "typ": "JWT", "kid": "ec" if alg.startswith("ES") else "rsa", **header}
    return sign_jws({k: v for k, v in full.items() if v is not ...}, claims() if payload is None else payload, key, alg)


def signed_raw(payload: bytes) -> str:
    """A payload segment of any bytes, correctly signed with the issuer's RSA key."""
    signing_input = f"{b64url(json.dumps({'alg': 'RS256', 'kid': 'rsa'}).encode())}.{b64url(payload)}"
    algorithm = jwt.get_algorithm_by_name("RS256")
    return f"{signing_input}.{b64url(algorithm.sign(signing_input.encode(), RSA_KEY))}"


def respell(jws: str, index: int, segment: str) -> str:
    parts = jws.split(".")
    parts[index] = segment
    return ".".join(parts)


def flip_last_bit(segment: str) -> str:
    """The same bytes with a stray low bit in the last character (another spelling)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    assert len(segment) % 4, "only a segment whose last character has unused bits"
    return segment[:-1] + alphabet[alphabet.index(segment[-1]) ^ 1]


async def refusal(jws: str, jwks: JwksCache | None = None, condition: str | None = None) -> ExchangeFailure:
    with pytest.raises(ExchangeFailure) as caught:
        await verify_subject_token(jws, _credential(condition), jwks or _jwks())
    return caught.value


UNAUTHENTICATED, AUTHENTICATED = False, True
PUBLIC_PEM = RSA_KEY.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)
GOOD = token()
PAYLOAD_WITHOUT_PADDING = next(t for i in range(4) if len((t := token(claims(pad="x" * i))).split(".")[1]) % 4)

# (case, token, HTTP status, RFC 6749 error, failing check in the exchange log, signature verified)
BAD_TOKENS: list[tuple[str, str, int, str, str, bool]] = [
    # the header, refused before any key is looked up
    ("alg none (empty signature)", unsigned_token(claims()), 401, "invalid_token", "malformed", UNAUTHENTICATED),
    (
        "alg none with the issuer's kid and a signature",
        compact({"alg": "none", "kid": "rsa"}, claims(), b"sig"),
        401,
        "invalid_token",
        "algorithm 'none' not allowed",
        UNAUTHENTICATED,
    ),
    (
        "alg missing",
        sign_jws({"kid": "rsa"}, claims(), RSA_KEY, "RS256"),
        401,
        "invalid_token",
        "algorithm 'None' not allowed",
        UNAUTHENTICATED,
    ),
    (
        "HS256 key confusion (the RSA key's PEM as HMAC secret)",
        key_confusion_token(PUBLIC_PEM, claims(), kid="rsa"),
        401,
        "invalid_token",
        "algorithm 'HS256' not allowed",
        UNAUTHENTICATED,
    ),
    ("crit header", token(crit=["exp"]), 401, "invalid_token", "crit header", UNAUTHENTICATED),
    # PyJWT differs: it accepts crit ["b64"] with "b64": true
    ("crit b64 (PyJWT accepts)", token(crit=["b64"], b64=True), 401, "invalid_token", "crit header", UNAUTHENTICATED),
    ("kid is a number", token(kid=7), 401, "invalid_token", "malformed: kid", UNAUTHENTICATED),
    # the key: chosen by kid from the issuer's JWKS, and it decides the algorithms
    ("unknown kid", token(kid="nope"), 401, "invalid_token", "signature: unknown key", UNAUTHENTICATED),
    ("no kid with two keys", token(kid=...), 401, "invalid_token", "signature: unknown key", UNAUTHENTICATED),
    (
        "ES256 header on the RSA key",
        sign_jws({"alg": "ES256", "kid": "rsa"}, claims(), RSA_KEY, "RS256"),
        401,
        "invalid_token",
        "algorithm does not match the key",
        UNAUTHENTICATED,
    ),
    (
        "RS256 header on the EC key",
        sign_jws({"alg": "RS256", "kid": "ec"}, claims(), EC_KEY, "ES256"),
        401,
        "invalid_token",
        "algorithm does not match the key",
        UNAUTHENTICATED,
    ),
    ("foreign RSA key, issuer kid", token(key=FOREIGN_RSA_KEY), 401, "invalid_token", "signature", UNAUTHENTICATED),
    (
        "tampered payload",
        respell(GOOD, 1, token(claims(sub="repo:o/r:ref:refs/heads/prod")).split(".")[1]),
        401,
        "invalid_token",
        "signature",
        UNAUTHENTICATED,
    ),
    (
        "signature of another token",
        respell(GOOD, 2, token(claims(x=1)).split(".")[2]),
        401,
        "invalid_token",
        "signature",
        False,
    ),
    # the compact form
    ("oversize", token(claims(pad="x" * MAX_SUBJECT_TOKEN_BYTES)), 401, "invalid_token", "malformed: oversize", False),
    ("two segments", ".".join(GOOD.split(".")[:2]), 401, "invalid_token", "malformed", UNAUTHENTICATED),
    ("four segments", GOOD + ".x", 401, "invalid_token", "malformed", UNAUTHENTICATED),
    ("empty signature", GOOD.rpartition(".")[0] + ".", 401, "invalid_token", "malformed", UNAUTHENTICATED),
    ("not a JWT", "hello", 401, "invalid_token", "malformed", UNAUTHENTICATED),
    ("bad base64 header", corrupt_segment(GOOD, 0), 401, "invalid_token", "malformed", UNAUTHENTICATED),
    ("bad base64 payload", corrupt_segment(GOOD, 1), 401, "invalid_token", "malformed", UNAUTHENTICATED),
    ("bad base64 signature", corrupt_segment(GOOD, 2), 401, "invalid_token", "malformed", UNAUTHENTICATED),
    ("header not an object", compact(b"[1]", claims()), 401, "invalid_token", "malformed", UNAUTHENTICATED),
    ("header not JSON", compact(b"{alg", claims()), 401, "invalid_token", "malformed", UNAUTHENTICATED),
    (
        "stray bits in the header's last character, alg none",
        respell(GOOD, 0, flip_last_bit(b64url(b'{"alg":"none","kid":"rsa"}'))),
        401,
        "invalid_token",
        "malformed",
        UNAUTHENTICATED,
    ),
    ("header with NaN", compact(b'{"alg":"RS256","x":NaN}', claims()), 401, "invalid_token", "malformed", False),
    # PyJWT differs: it strips "=" padding, so the padded spelling would verify
    (
        "padded payload (PyJWT accepts)",
        respell(
            PAYLOAD_WITHOUT_PADDING,
            1,
            PAYLOAD_WITHOUT_PADDING.split(".")[1] + "=" * (-len(PAYLOAD_WITHOUT_PADDING.split(".")[1]) % 4),
        ),
        401,
        "invalid_token",
        "malformed",
        UNAUTHENTICATED,
    ),
    (
        "stray bits in the payload's last character",
        respell(PAYLOAD_WITHOUT_PADDING, 1, flip_last_bit(PAYLOAD_WITHOUT_PADDING.split(".")[1])),
        401,
        "invalid_token",
        "malformed",
        UNAUTHENTICATED,
    ),
    ("payload not an object, signed", signed_raw(b"[1]"), 401, "invalid_token", "malformed", AUTHENTICATED),
    ("payload with NaN, signed", signed_raw(b'{"exp":NaN}'), 401, "invalid_token", "malformed", AUTHENTICATED),
    # the claims, after the signature verified
    ("expired", token(claims(exp=NOW - 3600, iat=NOW - 4000, nbf=...)), 401, "invalid_token", "expiry", True),
    ("expired beyond leeway", token(claims(exp=NOW - 31)), 401, "invalid_token", "expiry", AUTHENTICATED),
    ("missing exp", token(claims(exp=...)), 401, "invalid_token", "missing claim: exp", AUTHENTICATED),
    ("exp null", token(claims(exp=None)), 401, "invalid_token", "missing claim: exp", AUTHENTICATED),
    ("exp not a number", token(claims(exp="tomorrow")), 401, "invalid_token", "malformed claim: exp", True),
    # PyJWT differs: int("...") and int(True) would read these as times
    (
        "exp a numeric string",
        token(claims(exp=str(NOW + 6 * HOURS))),
        401,
        "invalid_token",
        "malformed claim: exp",
        True,
    ),
    ("exp true", token(claims(exp=True)), 401, "invalid_token", "malformed claim: exp", AUTHENTICATED),
    ("future nbf", token(claims(nbf=NOW + 6 * HOURS)), 401, "invalid_token", "not yet valid", AUTHENTICATED),
    ("nbf not a number", token(claims(nbf="soon")), 401, "invalid_token", "malformed claim: nbf", AUTHENTICATED),
    ("future iat", token(claims(iat=NOW + 6 * HOURS)), 401, "invalid_token", "not yet valid", AUTHENTICATED),
    ("iat not a number", token(claims(iat=[NOW])), 401, "invalid_token", "malformed claim: iat", AUTHENTICATED),
    ("25 h left", token(claims(exp=NOW + 25 * 3600)), 401, "invalid_token", "lifetime: more than 86400 s", True),
    (
        "issued 2 days ago, 6 h left",
        token(claims(iat=NOW - 2 * 86400, nbf=..., exp=NOW + 6 * HOURS)),
        401,
        "invalid_token",
        "lifetime: more than 86400 s",
        AUTHENTICATED,
    ),
    ("wrong issuer", token(claims(iss=ISSUER + "x")), 401, "invalid_token", "issuer", AUTHENTICATED),
    ("missing issuer", token(claims(iss=...)), 401, "invalid_token", "issuer", AUTHENTICATED),
    ("issuer as a list", token(claims(iss=[ISSUER])), 401, "invalid_token", "issuer", AUTHENTICATED),
    ("wrong audience", token(claims(aud="https://elsewhere")), 401, "invalid_token", "audience", AUTHENTICATED),
    ("missing audience", token(claims(aud=...)), 401, "invalid_token", "audience", AUTHENTICATED),
    ("empty audience", token(claims(aud="")), 401, "invalid_token", "audience", AUTHENTICATED),
    ("audience list without ours", token(claims(aud=["a", "b"])), 401, "invalid_token", "audience", AUTHENTICATED),
    ("missing subject", token(claims(sub=...)), 401, "invalid_token", "missing claim: sub", AUTHENTICATED),
    ("subject not a string", token(claims(sub=42)), 401, "invalid_token", "missing claim: sub", AUTHENTICATED),
    ("subject outside filter", token(claims(sub="repo:o/x:ref:main")), 403, "access_denied", "subject filter", True),
]


@pytest.mark.parametrize(
    ("case", "jws", "status", "error", "check", "authenticated"), BAD_TOKENS, ids=[c[0] for c in BAD_TOKENS]
)
async def test_a_bad_subject_token_is_refused_with_the_spec_error_and_the_failing_check(
    case: str, jws: str, status: int, error: str, check: str, authenticated: bool
) -> None:
    failure = await refusal(jws)
    assert (failure.status, failure.error, failure.check, failure.authenticated) == (
        status,
        error,
        check,
        authenticated,
    )


GOOD_TOKENS: list[tuple[str, str]] = [
    ("RS256", GOOD),
    ("ES256 with the EC key", token(alg="ES256")),
    ("RS384 and PS256 with an RSA key (any RS or PS algorithm, as before)", token(alg="RS384")),
    ("PS256 with an RSA key", token(alg="PS256")),
    ("float times", token(claims(exp=NOW + 6 * HOURS + 0.5, iat=NOW + 0.5))),
    ("no iat, no nbf", token(claims(iat=..., nbf=...))),
    ("23 h left", token(claims(exp=NOW + 23 * 3600))),
    ("audience list with ours", token(claims(aud=["other", AUDIENCE]))),
    # PyJWT differs on each of these: it refuses them
    ("null nbf and iat (no claims, as before)", token(claims(nbf=None, iat=None))),
    ("audience list with ours and a non-string", token(claims(aud=[AUDIENCE, 5]))),
    ("jti not a string", token(claims(jti=12))),
    ("typ not JWT and extra header fields", token(typ="at+jwt", x5t="abc")),
]


@pytest.mark.parametrize(("case", "jws"), GOOD_TOKENS, ids=[c[0] for c in GOOD_TOKENS])
async def test_a_good_subject_token_gives_its_claims(case: str, jws: str) -> None:
    got = await verify_subject_token(jws, _credential(), _jwks())
    assert got["sub"] == SUBJECT and got["iss"] == ISSUER


async def test_times_within_the_30_s_leeway_are_accepted() -> None:
    """Minted now (PyJWT reads the wall clock): exp 10 s past, nbf and iat 10 s ahead."""
    now = int(time.time())
    for jws in (token(claims(exp=now - 10)), token(claims(nbf=now + 10, iat=now + 10))):
        assert (await verify_subject_token(jws, _credential(), _jwks()))["sub"] == SUBJECT


async def test_without_kid_the_only_key_of_the_jwks_verifies() -> None:
    one_key = _jwks({"keys": [_jwk(RSA_KEY, "rsa", jwt.algorithms.RSAAlgorithm)]})
    assert (await verify_subject_token(token(kid=...), _credential(), one_key))["sub"] == SUBJECT


async def test_a_kid_that_is_null_is_refused_like_a_kid_that_is_not_a_string() -> None:
    """PyJWT refuses ``"kid": null`` (RFC 7515: a string) after the key lookup; the exchange refuses
    it before, with the same check as any other kid that is not a string. The one narrowing: before
    PyJWT, a null kid was read as no kid."""
    failure = await refusal(token(kid=None))
    assert (failure.status, failure.check, failure.authenticated) == (401, "malformed: kid", False)


async def test_a_payload_not_base64_encoded_is_refused() -> None:
    """``"b64": false`` (RFC 7797) needs a detached payload PyJWT refuses here: malformed. The other
    narrowing: before PyJWT, such a header without ``crit`` was ignored and the token verified."""
    failure = await refusal(token(b64=False))
    assert (failure.status, failure.check, failure.authenticated) == (401, "malformed", False)


async def test_a_false_condition_is_access_denied_naming_the_clause() -> None:
    failure = await refusal(GOOD, condition='sub == "repo:o/r:ref:refs/heads/main" && ref == "refs/heads/prod"')
    assert (failure.status, failure.error, failure.check) == (
        403,
        "access_denied",
        'condition: ref == "refs/heads/prod"',
    )


async def test_an_unknown_kid_refetches_the_jwks_and_finds_a_rotated_key() -> None:
    documents = [{"keys": [_jwk(EC_KEY, "ec", jwt.algorithms.ECAlgorithm)]}, JWKS]
    fetched: list[str] = []

    async def fetch(url: str) -> dict[str, Any]:
        fetched.append(url)
        return documents[min(len(fetched), len(documents)) - 1]

    jwks = JwksCache(fetch)
    assert (await verify_subject_token(token(alg="ES256"), _credential(), jwks))["sub"] == SUBJECT
    assert (await verify_subject_token(GOOD, _credential(), jwks))["sub"] == SUBJECT
    assert len(fetched) == 2


P384_KEY = ec.generate_private_key(ec.SECP384R1())
MISLABELLED_JWKS = {"keys": [_jwk(P384_KEY, "p384", jwt.algorithms.ECAlgorithm, alg="ES256")]}


def _p384_signed_as_es256(signature: bytes | None = None) -> str:
    signing_input = (
        f"{b64url(json.dumps({'alg': 'ES256', 'kid': 'p384'}).encode())}.{b64url(json.dumps(claims()).encode())}"
    )
    if signature is None:
        der = P384_KEY.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        signature = jwt.utils.der_to_raw_signature(der, P384_KEY.curve)
    return f"{signing_input}.{b64url(signature)}"


async def test_a_key_whose_curve_is_not_its_algorithms_refuses_as_a_bad_signature() -> None:
    """A JWKS entry ``"alg": "ES256"`` on a P-384 key: PyJWT refuses the key itself (InvalidKeyError,
    not an InvalidTokenError), which must stay a 401, never a 500. A signature that does not
    verify was ``signature`` before, and is."""
    failure = await refusal(_p384_signed_as_es256(b"\0" * 64), _jwks(MISLABELLED_JWKS))
    assert (failure.status, failure.error, failure.check, failure.authenticated) == (
        401,
        "invalid_token",
        "signature",
        False,
    )


async def test_a_token_signed_with_a_key_of_the_wrong_curve_is_refused() -> None:
    """The third narrowing: before PyJWT, ES256 over a P-384 key the JWKS called ES256 verified."""
    failure = await refusal(_p384_signed_as_es256(), _jwks(MISLABELLED_JWKS))
    assert (failure.status, failure.check, failure.authenticated) == (401, "signature", False)


_SEGMENT_TEXT = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=.!+/ ", max_size=80)


@st.composite
def _mutated_tokens(draw: st.DrawFn) -> str:
    """A good token with one slice replaced, or a token of any text."""
    if draw(st.booleans()):
        return draw(st.one_of(_SEGMENT_TEXT, st.text(max_size=200)))
    base = draw(st.sampled_from([GOOD, token(alg="ES256"), token(alg="PS256"), signed_raw(b'{"exp":1}')]))
    start = draw(st.integers(0, len(base)))
    end = draw(st.integers(start, min(len(base), start + 8)))
    return base[:start] + draw(_SEGMENT_TEXT) + base[end:]


@settings(max_examples=300, deadline=None)
@given(_mutated_tokens())
def test_any_subject_token_is_either_verified_or_refused_with_an_exchange_failure(jws: str) -> None:
    """Never another exception (a 500) whatever the token: PyJWT's own errors are all mapped."""
    try:
        asyncio.run(verify_subject_token(jws, _credential(), _jwks()))
    except ExchangeFailure as failure:
        assert (failure.status, failure.error) in {(401, "invalid_token"), (403, "access_denied")}
