"""The Guard: in front of every route (auth, rate limits, request screening) and over every answer.

A plain object; the Guard deployment wraps it. Only this object decides ``policy_blocked``; no request
field, header or prompt reaches a switch that turns it off (there is none)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from serve_app import errors
from serve_app.guard.auth import Authenticator, AuthError, Principal
from serve_app.guard.policy import GuardDecision, PolicyGuard
from serve_app.guard.ratelimit import RateLimiter, retry_after_header


@dataclass(frozen=True)
class Admission:
    """What the guard says about a request before any work: who is asking, the Retry-After of the per-key
    rate limit (None: within it), and the screen of the question alone when the caller sent one."""

    principal: Principal
    retry_after: str | None = None
    screen: GuardDecision | None = None


class SharedLimits(Protocol):
    """The store's moving-window limit, shared by every ingress replica (conversation/shared_limits.py)."""

    def hit_rate_limit(self, key: str, limit: int, window_s: float) -> float | None: ...


@dataclass(kw_only=True, eq=False)
class GuardService:
    authenticator: Authenticator
    policy: PolicyGuard
    limiter: RateLimiter
    # Per verified principal (a partner's end user, ``iss|sub``), keyed by issuer for per-partner limits:
    # one partner's users cannot spend the shared API key's whole allowance between them unnoticed.
    principal_limiter: RateLimiter | None = None
    store: SharedLimits | None = None
    playground_per_minute: int = 10

    async def admit(self, headers: Mapping[str, str], question: str | None = None) -> Admission:
        """One guard call per request: 401 for a missing or unaccepted key and, with partners configured,
        any JWT problem; then the per-key and per-principal rate limits, whose Retry-After (or None) the
        ingress turns into 429 only after the body checks (the contract puts 400/422/503/403 before 429).
        With ``question`` (a valid body's query) the question is screened in the same call, so a request that
        brings no conversation history costs the graph no second guard round trip; the pipeline applies that
        verdict at its place in the contract's order (after the conversation and scope checks)."""
        try:
            principal = self.authenticator.authenticate(headers)
        except AuthError:
            raise errors.Unauthorized() from None
        api_key = next((v for k, v in headers.items() if k.lower() == "x-api-key"), "")
        retry = self.limiter.check("key:" + hashlib.sha256(api_key.encode()).hexdigest()[:16])
        if retry is None and principal.verified and self.principal_limiter is not None:
            retry = self.principal_limiter.check("principal:" + principal.key, limit_key=principal.issuer)
        screen = None if question is None else await self.policy.ascreen_request(question, ())
        return Admission(principal, None if retry is None else retry_after_header(retry), screen)

    async def verified_identity_enabled(self) -> bool:
        return self.authenticator.verified_identity_enabled

    async def playground_limit(self, principal: Principal) -> str | None:
        """Per admin, shared by every ingress replica through the store: Retry-After or None."""
        if self.store is None:
            return None
        retry = await asyncio.to_thread(
            self.store.hit_rate_limit, "playground:" + principal.key, self.playground_per_minute, 60.0
        )
        return None if retry is None else retry_after_header(retry)

    async def screen_request(self, query: str, history: Sequence[str] = ()) -> GuardDecision:
        return await self.policy.ascreen_request(query, history)

    async def check_answer(self, answer: str, passages: Sequence[str] = ()) -> GuardDecision:
        return await self.policy.acheck_answer(answer, passages)

    async def screen_passage(self, text: str) -> GuardDecision:
        return self.policy.screen_passage(text)

    async def refusal_text(self, kind: str) -> str:
        return self.policy.refusal_text(kind)
