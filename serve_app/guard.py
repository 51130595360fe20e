"""The Guard: in front of every route (auth, rate limits, request screening) and over every answer.

A plain object; the Guard deployment wraps it. Only this object decides ``policy_blocked``; no request
field, header or prompt reaches a switch that turns it off (there is none)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from serve_app import errors
from serve_app.auth import AuthError, Authenticator, Principal
from serve_app.policy import GuardDecision, PolicyGuard
from serve_app.ratelimit import RateLimiter, retry_after_header


class GuardService:
    def __init__(
        self,
        *,
        authenticator: Authenticator,
        policy: PolicyGuard,
        limiter: RateLimiter,
        store: Any = None,
        playground_per_minute: int = 10,
    ) -> None:
        self.authenticator = authenticator
        self.policy = policy
        self.limiter = limiter
        self.store = store
        self.playground_per_minute = playground_per_minute

    @property
    def verified_identity(self) -> bool:
        return self.authenticator.verified_identity_enabled

    async def admit(self, headers: Mapping[str, str]) -> Principal:
        """401 for a missing or unaccepted key and, with partners configured, any JWT problem."""
        try:
            return self.authenticator.authenticate(headers)
        except AuthError:
            raise errors.Unauthorized() from None

    async def verified_identity_enabled(self) -> bool:
        return self.authenticator.verified_identity_enabled

    async def rate_limit(self, api_key: str, principal: Principal, *, playground: bool = False) -> None:
        key = "key:" + hashlib.sha256(api_key.encode()).hexdigest()[:16]
        retry = self.limiter.check(key)
        if retry is None and playground and self.store is not None:
            # Per admin, shared by every ingress replica through the store.
            retry = await asyncio.to_thread(
                self.store.hit_rate_limit, "playground:" + principal.key, self.playground_per_minute, 60.0
            )
        if retry is not None:
            raise errors.RateLimited(headers={"Retry-After": retry_after_header(retry)})

    async def screen_request(self, query: str, history: Sequence[str] = ()) -> GuardDecision:
        return await self.policy.ascreen_request(query, history)

    async def check_answer(self, answer: str, passages: Sequence[str] = ()) -> GuardDecision:
        return await self.policy.acheck_answer(answer, passages)

    async def screen_passage(self, text: str) -> GuardDecision:
        return self.policy.screen_passage(text)

    async def refusal_text(self, kind: str) -> str:
        return self.policy.refusal_text(kind)
