"""Who is calling: the shared API key (``X-API-Key``) and, when a partners file is configured, a
partner-signed JWT naming the end user (DESIGN.md "Fixed interfaces", Auth).

Every rejection is one :class:`AuthError` with the same fixed text, whatever the cause; the cause is
logged at debug level only, so a caller probing tokens learns nothing from the answer.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt

from serve_app import errors

log = logging.getLogger(__name__)

AUDIENCE = "aceh-rag"
LEEWAY_S = 30
ALLOWED_ALGORITHMS = ("RS256", "ES256", "EdDSA")
# The algorithm each accepted key type signs with; a token's header must name exactly this one.
_KEY_ALGORITHM: dict[tuple[Any, Any], str] = {
    ("RSA", None): "RS256",
    ("EC", "P-256"): "ES256",
    ("OKP", "Ed25519"): "EdDSA",
}
_PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "k")
_HASHED_KEY = re.compile(r"sha256:([0-9a-fA-F]{64})")


class AuthError(errors.Unauthorized):
    """Credentials missing or not accepted. Deliberately carries no cause."""

    def __init__(self) -> None:
        super().__init__()


@dataclass(frozen=True)
class Principal:
    """The caller. Verified principals are (``iss``, ``sub``) from a partner-signed token."""

    issuer: str | None
    subject: str | None
    roles: frozenset[str] = field(default_factory=frozenset)
    verified: bool = False

    @classmethod
    def anonymous(cls) -> Principal:
        return cls(issuer=None, subject=None, roles=frozenset(), verified=False)

    @property
    def is_admin(self) -> bool:
        return self.verified and "admin" in self.roles

    @property
    def key(self) -> str:
        """Stable owner key for stored conversations; every unverified caller shares ``anonymous``."""
        if not self.verified:
            return "anonymous"
        return f"{self.issuer}|{self.subject}"


@dataclass(frozen=True)
class _PartnerKey:
    kid: str | None
    algorithm: str
    key: Any


@dataclass(frozen=True)
class _Partner:
    partner_id: str
    issuer: str
    keys: tuple[_PartnerKey, ...]

    def key_for(self, kid: str | None) -> _PartnerKey | None:
        if kid is None:
            # Without a kid only an unambiguous single key may be used.
            return self.keys[0] if len(self.keys) == 1 else None
        return next((k for k in self.keys if k.kid == kid), None)


def load_partners(path: str | Path) -> dict[str, _Partner]:
    """Read the partners file into ``{issuer: partner}``. Raises ValueError with one sentence."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"Partners file {path} does not exist (ACEH_PARTNERS_FILE).") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"Partners file {path} cannot be read: {exc.__class__.__name__}.") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"Partners file {path} is not valid JSON (line {exc.lineno}).") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("partners"), list):
        raise ValueError(f'Partners file {path} must hold {{"partners": [...]}}.')
    partners: dict[str, _Partner] = {}
    for index, entry in enumerate(raw["partners"]):
        partner = _parse_partner(path, index, entry)
        if partner.issuer in partners:
            raise ValueError(f"Partners file {path}: issuer '{partner.issuer}' is registered twice.")
        partners[partner.issuer] = partner
    return partners


def _parse_partner(path: Path, index: int, entry: Any) -> _Partner:
    where = f"Partners file {path}: partner #{index + 1}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object with id, issuer and jwks.")
    pid, issuer, jwks = entry.get("id"), entry.get("issuer"), entry.get("jwks")
    if not isinstance(pid, str) or not pid:
        raise ValueError(f"{where} has no 'id' string.")
    if not isinstance(issuer, str) or not issuer:
        raise ValueError(f"{where} ('{pid}') has no 'issuer' string.")
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list) or not jwks["keys"]:
        raise ValueError(f"{where} ('{pid}') needs 'jwks': {{'keys': [at least one public JWK]}}.")
    keys = [_parse_jwk(f"{where} ('{pid}') key #{n + 1}", jwk) for n, jwk in enumerate(jwks["keys"])]
    kids = [k.kid for k in keys if k.kid is not None]
    if len(kids) != len(set(kids)):
        raise ValueError(f"{where} ('{pid}') has two keys with the same kid.")
    if len(keys) > 1 and len(kids) != len(keys):
        raise ValueError(f"{where} ('{pid}') has several keys, so every key needs a 'kid'.")
    return _Partner(partner_id=pid, issuer=issuer, keys=tuple(keys))


def _parse_jwk(where: str, jwk: Any) -> _PartnerKey:
    if not isinstance(jwk, dict):
        raise ValueError(f"{where} is not a JWK object.")
    kty, crv = jwk.get("kty"), jwk.get("crv")
    algorithm = _KEY_ALGORITHM.get((kty, None if kty == "RSA" else crv))
    if algorithm is None:
        raise ValueError(f"{where} has kty '{kty}' crv '{crv}'; accepted: RSA, EC P-256, OKP Ed25519.")
    if any(member in jwk for member in _PRIVATE_MEMBERS):
        raise ValueError(f"{where} contains private key material; register public keys only.")
    if jwk.get("alg") not in (None, algorithm):
        raise ValueError(f"{where} says alg '{jwk.get('alg')}' but a {kty} key signs with {algorithm}.")
    if jwk.get("use") not in (None, "sig"):
        raise ValueError(f"{where} has use '{jwk.get('use')}'; signing keys need use 'sig' or none.")
    kid = jwk.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise ValueError(f"{where} has a kid that is not a string.")
    try:
        key = jwt.PyJWK(jwk, algorithm=algorithm).key
    except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{where} is not a valid public JWK ({exc.__class__.__name__}).") from None
    return _PartnerKey(kid=kid, algorithm=algorithm, key=key)


def _parse_api_keys(plain: str | None, hashed: Sequence[str]) -> tuple[list[bytes], list[bytes]]:
    plain_keys = [k.strip().encode() for k in (plain or "").split(",") if k.strip()]
    digests = []
    for entry in hashed:
        match = _HASHED_KEY.fullmatch(entry.strip()) if isinstance(entry, str) else None
        if match is None:
            raise ValueError("Every api_key_hashes entry must be 'sha256:' followed by 64 hex digits.")
        digests.append(bytes.fromhex(match.group(1)))
    if not plain_keys and not digests:
        # Fail closed rather than refuse to build: the in-process CLI needs no key, a server answers 401.
        log.warning("no API key is configured (ACEH_API_KEYS or api_key_hashes): every request gets 401")
    return plain_keys, digests


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value


class Authenticator:
    """Checks the API key and, when verified identity is on, the partner JWT. Thread-safe."""

    def __init__(
        self,
        *,
        plain_keys: Sequence[bytes],
        key_digests: Sequence[bytes],
        partners_file: str | Path | None = None,
    ) -> None:
        self._plain_keys = list(plain_keys)
        self._key_digests = list(key_digests)
        self._partners_file = Path(partners_file) if partners_file else None
        self._partners: dict[str, _Partner] = {}
        self._file_stamp: tuple[int, int, int] | None = None
        self._failed_stamp: tuple[int, int, int] | None = None
        self._reload_lock = threading.Lock()
        if self._partners_file is not None:
            self._file_stamp = self._stamp()
            self._partners = load_partners(self._partners_file)

    @classmethod
    def from_env(
        cls, api_keys: str | None, partners_file: str | None, hashed_keys: Sequence[str] = ()
    ) -> Authenticator:
        """Build from ``ACEH_API_KEYS``, ``ACEH_PARTNERS_FILE`` and the config's hashed keys.
        Raises ValueError (one sentence) for a bad hash entry or a bad partners file. With no key at
        all every request is refused (see ``has_api_keys``)."""
        plain, digests = _parse_api_keys(api_keys, hashed_keys)
        return cls(plain_keys=plain, key_digests=digests, partners_file=partners_file or None)

    @property
    def has_api_keys(self) -> bool:
        return bool(self._plain_keys or self._key_digests)

    @property
    def verified_identity_enabled(self) -> bool:
        return self._partners_file is not None

    def authenticate(self, headers: Mapping[str, str]) -> Principal:
        """The caller's principal, or AuthError (always the same text) for any problem."""
        if not self._api_key_accepted(_header(headers, "x-api-key")):
            return self._reject("api key missing or not accepted")
        if self._partners_file is None:
            return Principal.anonymous()  # verified identity off: a JWT, if any, is ignored
        authorization = _header(headers, "authorization") or ""
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return self._reject("no bearer token")
        return self._verify_token(token.strip())

    # ------------------------------------------------------------------ internals

    def _reject(self, cause: str) -> Principal:
        log.debug("authentication rejected: %s", cause)
        raise AuthError()

    def _api_key_accepted(self, presented: str | None) -> bool:
        if not presented:
            return False
        candidate = presented.encode()
        digest = hashlib.sha256(candidate).digest()
        accepted = False
        # Compare against every key without stopping early, so timing says nothing about which matched.
        for key in self._plain_keys:
            accepted |= hmac.compare_digest(candidate, key)
        for expected in self._key_digests:
            accepted |= hmac.compare_digest(digest, expected)
        return accepted

    def _verify_token(self, token: str) -> Principal:
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError as exc:
            return self._reject(f"malformed token ({exc.__class__.__name__})")
        alg = header.get("alg")
        if alg not in ALLOWED_ALGORITHMS:
            return self._reject(f"algorithm {alg!r} not accepted")
        issuer = unverified.get("iss")
        partner = self._current_partners().get(issuer) if isinstance(issuer, str) else None
        if partner is None:
            return self._reject("unknown issuer")
        kid = header.get("kid")
        key = partner.key_for(kid if isinstance(kid, str) else None)
        if key is None or (kid is not None and not isinstance(kid, str)):
            return self._reject("unknown kid")
        if key.algorithm != alg:
            return self._reject(f"algorithm {alg} does not match the {key.algorithm} key")
        try:
            claims = jwt.decode(
                token,
                key=key.key,
                algorithms=[key.algorithm],
                audience=AUDIENCE,
                issuer=partner.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud", "sub"], "verify_nbf": True},
            )
        except jwt.PyJWTError as exc:
            return self._reject(f"token rejected ({exc.__class__.__name__})")
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            return self._reject("sub is not a non-empty string")
        roles = _roles(claims.get("roles"))
        return Principal(issuer=partner.issuer, subject=subject, roles=roles, verified=True)

    def _stamp(self) -> tuple[int, int, int] | None:
        assert self._partners_file is not None
        try:
            st = os.stat(self._partners_file)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _current_partners(self) -> dict[str, _Partner]:
        """Reload the partners file when it changed (key rotation). A file that is momentarily broken
        (half-written, removed) keeps the last good keys and is retried on the next request."""
        stamp = self._stamp()
        if stamp is None or stamp in (self._file_stamp, self._failed_stamp):
            return self._partners
        with self._reload_lock:
            if stamp not in (self._file_stamp, self._failed_stamp):
                try:
                    self._partners = load_partners(self._partners_file)  # type: ignore[arg-type]
                    self._file_stamp = stamp
                    log.info("partners file reloaded: %d partners", len(self._partners))
                except ValueError as exc:
                    self._failed_stamp = stamp
                    log.error("partners file not reloaded, keeping the previous keys: %s", exc)
        return self._partners


def _roles(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def hash_api_key(key: str) -> str:
    """The ``sha256:<hex>`` form of a key, for ``api_key_hashes`` in the config."""
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()
