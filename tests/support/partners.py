"""Registered partners for tests: real RSA keys, a partners file, and signed JWT headers per partner."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from serve_app.guard.auth import AUDIENCE
from tests.conftest import API_KEY


class Partners:
    """``Partners(tmp, {"mitra-a": "https://a.example", ...})``: one key per partner, written to a file."""

    def __init__(self, folder: Path, issuers: dict[str, str]) -> None:
        self.issuers = issuers
        self.keys = {pid: rsa.generate_private_key(public_exponent=65537, key_size=2048) for pid in issuers}
        entries = []
        for pid, issuer in issuers.items():
            jwk = RSAAlgorithm.to_jwk(self.keys[pid].public_key(), as_dict=True)
            jwk["kid"] = f"{pid}-k1"
            entries.append({"id": pid, "issuer": issuer, "jwks": {"keys": [jwk]}})
        self.path = folder / "partners.json"
        self.path.write_text(json.dumps({"partners": entries}), encoding="utf-8")

    def headers(self, partner: str, sub: str, *roles: str) -> dict[str, str]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuers[partner], "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 600,
        }
        if roles:
            claims["roles"] = list(roles)
        token = jwt.encode(claims, self.keys[partner], algorithm="RS256", headers={"kid": f"{partner}-k1"})
        return {"X-API-Key": API_KEY, "Authorization": f"Bearer {token}"}
