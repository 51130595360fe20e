"""Partner JWTs and API keys: every forged or broken credential is one AuthError with one text."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from serve_app.guard.auth import AUDIENCE, Authenticator, AuthError, Principal, hash_api_key

ISSUER = "https://idp.mitra-a.example"
OTHER_ISSUER = "https://idp.mitra-b.example"
API_KEY = "kunci-rahasia"
KEY_HEADER = {"X-API-Key": API_KEY}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def keys() -> dict[str, Any]:
    return {
        "rsa": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "rsa_other": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "ec": ec.generate_private_key(ec.SECP256R1()),
        "ed": ed25519.Ed25519PrivateKey.generate(),
    }


def _jwk(private_key: Any, kid: str | None) -> dict[str, Any]:
    public = private_key.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        jwk = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        jwk = OKPAlgorithm.to_jwk(public, as_dict=True)
    if kid is not None:
        jwk["kid"] = kid
    return jwk


def _write_partners(path: Path, partners: list[tuple[str, str, list[dict[str, Any]]]]) -> None:
    doc = {"partners": [{"id": pid, "issuer": iss, "jwks": {"keys": jwks}} for pid, iss, jwks in partners]}
    stamp = path.stat().st_mtime_ns if path.exists() else None
    path.write_text(json.dumps(doc), encoding="utf-8")
    if stamp is not None:  # make sure a rewrite is seen as a change even on coarse-mtime filesystems
        os.utime(path, ns=(stamp + 2_000_000_000, stamp + 2_000_000_000))


@pytest.fixture()
def partners_file(tmp_path: Path, keys: dict[str, Any]) -> Path:
    path = tmp_path / "partners.json"
    _write_partners(path, [
        ("mitra-a", ISSUER, [_jwk(keys["rsa"], "rsa-1"), _jwk(keys["ec"], "ec-1"), _jwk(keys["ed"], "ed-1")]),
        ("mitra-b", OTHER_ISSUER, [_jwk(keys["rsa_other"], None)]),
    ])
    return path


@pytest.fixture()
def auth(partners_file: Path) -> Authenticator:
    return Authenticator.from_env(API_KEY, str(partners_file))


def _claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "pengguna-42", "iat": now, "exp": now + 600}
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


def _token(keys: dict[str, Any], *, key: str = "rsa", alg: str = "RS256", kid: str | None = "rsa-1",
           **claims: Any) -> str:
    headers = {"kid": kid} if kid is not None else {}
    return jwt.encode(_claims(**claims), keys[key], algorithm=alg, headers=headers)


def _headers(token: str) -> dict[str, str]:
    return {**KEY_HEADER, "Authorization": f"Bearer {token}"}


def _hmac_token(secret: bytes, claims: dict[str, Any], kid: str = "rsa-1") -> str:
    """An HS256 token built by hand: PyJWT rightly refuses to sign HS256 with a PEM-looking secret."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    payload = _b64(json.dumps(claims).encode())
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"


# ---------------------------------------------------------------- accepted


@pytest.mark.parametrize(("key", "alg", "kid"), [("rsa", "RS256", "rsa-1"), ("ec", "ES256", "ec-1"),
                                                 ("ed", "EdDSA", "ed-1")])
def test_valid_partner_tokens_are_accepted(auth: Authenticator, keys: dict[str, Any], key: str, alg: str,
                                           kid: str) -> None:
    principal = auth.authenticate(_headers(_token(keys, key=key, alg=alg, kid=kid)))
    assert principal == Principal(ISSUER, "pengguna-42", frozenset(), True)
    assert principal.key == f"{ISSUER}|pengguna-42"
    assert not principal.is_admin


def test_admin_role_and_lowercase_headers(auth: Authenticator, keys: dict[str, Any]) -> None:
    token = _token(keys, roles=["admin", "editor"])
    principal = auth.authenticate({"x-api-key": API_KEY, "authorization": f"bearer {token}"})
    assert principal.is_admin and principal.roles == frozenset({"admin", "editor"})


def test_single_key_partner_needs_no_kid(auth: Authenticator, keys: dict[str, Any]) -> None:
    token = _token(keys, key="rsa_other", kid=None, iss=OTHER_ISSUER)
    assert auth.authenticate(_headers(token)).issuer == OTHER_ISSUER


def test_clock_skew_leeway_is_small(auth: Authenticator, keys: dict[str, Any]) -> None:
    now = int(time.time())
    auth.authenticate(_headers(_token(keys, exp=now - 10)))
    auth.authenticate(_headers(_token(keys, nbf=now + 10)))
    with pytest.raises(AuthError):
        auth.authenticate(_headers(_token(keys, exp=now - 90)))


# ---------------------------------------------------------------- rejected


def _forgeries(keys: dict[str, Any]) -> dict[str, str]:
    now = int(time.time())
    rsa_pem = keys["rsa"].public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    good = _token(keys)
    head, payload, sig = good.split(".")
    tampered_payload = _b64(json.dumps(_claims(sub="admin-palsu", roles=["admin"])).encode())
    none_header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": "rsa-1"}).encode())
    return {
        "alg none": f"{none_header}.{payload}.",
        "HS256 with the public key as secret": _hmac_token(rsa_pem, _claims()),
        "HS256 with the JWK as secret": _hmac_token(json.dumps(_jwk(keys["rsa"], "rsa-1")).encode(),
                                                    _claims()),
        "wrong key": _token(keys, key="rsa_other"),
        "tampered payload": f"{head}.{tampered_payload}.{sig}",
        "algorithm not matching the key": _token(keys, key="ec", alg="ES256", kid="rsa-1"),
        "unknown kid": _token(keys, kid="rsa-9"),
        "no kid with several keys": _token(keys, kid=None),
        "unknown issuer": _token(keys, iss="https://idp.palsu.example"),
        "missing issuer": _token(keys, iss=None),
        "wrong audience": _token(keys, aud="aplikasi-lain"),
        "missing audience": _token(keys, aud=None),
        "expired": _token(keys, exp=now - 3600),
        "not yet valid": _token(keys, nbf=now + 3600),
        "missing sub": _token(keys, sub=None),
        "empty sub": _token(keys, sub=""),
        "missing exp": _token(keys, exp=None),
        "garbage": "bukan.sebuah.token",
        "RS384 not accepted": _token(keys, alg="RS384"),
    }


def test_every_forged_or_broken_token_is_rejected_with_one_text(
    auth: Authenticator, keys: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    texts = set()
    for name, token in _forgeries(keys).items():
        with caplog.at_level(logging.DEBUG, logger="serve_app.guard.auth"):
            caplog.clear()
            with pytest.raises(AuthError) as excinfo:
                auth.authenticate(_headers(token))
        texts.add((str(excinfo.value), excinfo.value.detail, excinfo.value.status_code))
        assert any("rejected" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records), name
    assert len(texts) == 1
    assert texts.pop()[2] == 401


@pytest.mark.parametrize("headers", [
    {},
    {"X-API-Key": "salah"},
    {"X-API-Key": ""},
    {"Authorization": "Bearer x"},
])
def test_missing_or_wrong_api_key_is_rejected(auth: Authenticator, headers: dict[str, str]) -> None:
    with pytest.raises(AuthError):
        auth.authenticate(headers)


def test_api_key_alone_is_not_enough_with_partners(auth: Authenticator, keys: dict[str, Any]) -> None:
    for headers in (KEY_HEADER, {**KEY_HEADER, "Authorization": "Basic dXNlcjpwYXNz"},
                    {**KEY_HEADER, "Authorization": "Bearer "}):
        with pytest.raises(AuthError):
            auth.authenticate(headers)
    with pytest.raises(AuthError):  # a valid token does not excuse a wrong key
        auth.authenticate({"X-API-Key": "salah", "Authorization": f"Bearer {_token(keys)}"})


# ---------------------------------------------------------------- without partners, keys


def test_without_partners_file_the_jwt_is_ignored(keys: dict[str, Any]) -> None:
    auth = Authenticator.from_env("satu, dua ,", None)
    assert not auth.verified_identity_enabled
    for headers in ({"X-API-Key": "satu"}, {"X-API-Key": "dua", "Authorization": "Bearer sampah"},
                    {"X-API-Key": "dua", "Authorization": f"Bearer {_token(keys, roles=['admin'])}"}):
        principal = auth.authenticate(headers)
        assert principal == Principal.anonymous()
        assert principal.key == "anonymous" and not principal.is_admin
    with pytest.raises(AuthError):
        auth.authenticate({"X-API-Key": "tiga"})


def test_hashed_keys_are_accepted() -> None:
    auth = Authenticator.from_env(None, None, hashed_keys=[hash_api_key("hashed-one")])
    assert auth.authenticate({"X-API-Key": "hashed-one"}).key == "anonymous"
    with pytest.raises(AuthError):
        auth.authenticate({"X-API-Key": hash_api_key("hashed-one")})


@pytest.mark.parametrize("hashed", [["md5:abc"], ["sha256:xyz"], ["sha256:" + "0" * 63]])
def test_bad_hashed_key_fails_at_start(hashed: list[str]) -> None:
    with pytest.raises(ValueError, match="sha256"):
        Authenticator.from_env("k", None, hashed_keys=hashed)


@pytest.mark.parametrize("plain", [None, "", " , "])
def test_no_configured_key_refuses_everyone(plain: str | None) -> None:
    auth = Authenticator.from_env(plain, None)
    assert not auth.has_api_keys
    for presented in ("", " ", ",", "anything"):
        with pytest.raises(AuthError):
            auth.authenticate({"X-API-Key": presented})


# ---------------------------------------------------------------- partners file


@pytest.mark.parametrize("content", [
    None,
    "{not json",
    json.dumps({"partners": {}}),
    json.dumps({"partners": [{"id": "x", "issuer": "i", "jwks": {"keys": [{"kty": "oct", "k": "c2Vj"}]}}]}),
    json.dumps({"partners": [{"id": "x", "issuer": "i", "jwks": {"keys": [{"kty": "RSA", "n": "AQAB"}]}}]}),
    json.dumps({"partners": [{"id": "x", "issuer": "i", "jwks": {"keys": []}}]}),
    json.dumps({"partners": [{"id": "x", "jwks": {"keys": []}}]}),
])
def test_bad_partners_file_is_one_clear_sentence(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "partners.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError) as excinfo:
        Authenticator.from_env(API_KEY, str(path))
    message = str(excinfo.value)
    assert str(path) in message and message.endswith(".") and "\n" not in message


def test_private_or_duplicate_keys_are_refused(tmp_path: Path, keys: dict[str, Any]) -> None:
    path = tmp_path / "partners.json"
    private = RSAAlgorithm.to_jwk(keys["rsa"], as_dict=True)
    _write_partners(path, [("x", ISSUER, [private])])
    with pytest.raises(ValueError, match="private"):
        Authenticator.from_env(API_KEY, str(path))
    _write_partners(path, [("x", ISSUER, [_jwk(keys["rsa"], "k")]), ("y", ISSUER, [_jwk(keys["ec"], "k")])])
    with pytest.raises(ValueError, match="twice"):
        Authenticator.from_env(API_KEY, str(path))


def test_key_rotation_reloads_the_file(tmp_path: Path, keys: dict[str, Any]) -> None:
    path = tmp_path / "partners.json"
    _write_partners(path, [("mitra-a", ISSUER, [_jwk(keys["rsa"], "2025")])])
    auth = Authenticator.from_env(API_KEY, str(path))
    old = _token(keys, kid="2025")
    assert auth.authenticate(_headers(old)).verified

    _write_partners(path, [("mitra-a", ISSUER, [_jwk(keys["ec"], "2026")])])  # the old key is retired
    new = _token(keys, key="ec", alg="ES256", kid="2026")
    assert auth.authenticate(_headers(new)).subject == "pengguna-42"
    with pytest.raises(AuthError):
        auth.authenticate(_headers(old))

    path.write_text("{half-written", encoding="utf-8")  # a broken rewrite keeps the last good keys
    os.utime(path, ns=(time.time_ns() + 5_000_000_000,) * 2)
    assert auth.authenticate(_headers(new)).verified
