"""Per-key rate limits for the Guard: an in-memory token bucket per API key (or per admin on /playground).

One :class:`RateLimiter` per scope. ``check(key)`` spends one token and returns ``None`` when the request may
go ahead, or the seconds until a token is back (the ``Retry-After`` of a 429). A bucket holds ``burst``
tokens and refills at ``requests / per_seconds``; the default burst is a full window, so a client may spend
its minute's allowance at once but never more than ``requests`` plus what refilled meanwhile.

Buckets are per process: with N guard processes each enforces 1/N of every limit (``processes``). The
conversation store offers the exact cross-replica limiter for /playground; keys here are kept in memory only
and idle full buckets are dropped so memory stays bounded.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Clock = Callable[[], float]


@dataclass(frozen=True)
class RateLimit:
    """``requests`` per ``per_seconds``, with at most ``burst`` at once (default: ``requests``)."""

    requests: int
    per_seconds: float = 60.0
    burst: int | None = None

    def __post_init__(self) -> None:
        if self.requests < 1 or self.per_seconds <= 0 or (self.burst is not None and self.burst < 1):
            raise ValueError(f"Rate limit {self} needs requests >= 1, per_seconds > 0 and burst >= 1.")

    @property
    def capacity(self) -> float:
        return float(self.burst if self.burst is not None else self.requests)

    @property
    def rate(self) -> float:
        return self.requests / self.per_seconds

    def share(self, processes: int) -> RateLimit:
        """This process's part when ``processes`` guards split one key's traffic evenly (rounded up)."""
        if processes <= 1:
            return self
        burst = None if self.burst is None else math.ceil(self.burst / processes)
        return RateLimit(math.ceil(self.requests / processes), self.per_seconds, burst)


# Sized so 32 concurrent benchmark clients on one key are never throttled (100 requests a second).
DEFAULT_LIMIT = RateLimit(requests=6000, per_seconds=60.0)


class RateLimiter:
    """Token buckets keyed by API key or admin id; ``per_key`` overrides the default for named keys."""

    def __init__(
        self,
        default: RateLimit | None = None,
        *,
        per_minute: int | None = None,
        per_key: Mapping[str, RateLimit] | None = None,
        clock: Clock = time.monotonic,
        max_keys: int = 100_000,
        processes: int = 1,
    ) -> None:
        """``default`` or, as a shorthand, ``per_minute`` requests per 60 s (not both).

        ``processes``: how many guard processes (replicas) share the traffic. Buckets live in memory, so
        each keeps its share of every limit; Ray Serve spreads requests evenly over replicas, so the sum
        stays the configured limit (up to rounding) without a shared counter on every request's path."""
        if default is not None and per_minute is not None:
            raise ValueError("Give either a default rate limit or per_minute, not both.")
        if per_minute is not None:
            default = RateLimit(requests=per_minute, per_seconds=60.0)
        self.default = (default or DEFAULT_LIMIT).share(processes)
        self._per_key = {key: limit.share(processes) for key, limit in (per_key or {}).items()}
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill time)
        self._lock = threading.Lock()

    def limit_for(self, key: str) -> RateLimit:
        return self._per_key.get(key, self.default)

    def check(self, key: str, cost: float = 1.0) -> float | None:
        """Spend ``cost`` tokens of ``key``: ``None`` if allowed, else seconds to wait (always > 0)."""
        limit = self.limit_for(key)
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (limit.capacity, now))
            tokens = min(limit.capacity, tokens + max(0.0, now - last) * limit.rate)
            if tokens >= cost:
                self._buckets[key] = (tokens - cost, now)
                allowed = True
            else:
                self._buckets[key] = (tokens, now)
                allowed = False
            if len(self._buckets) > self._max_keys:
                self._evict(now)
        if allowed:
            return None
        if cost > limit.capacity:
            return math.inf  # can never be served; the caller answers 429 with its longest Retry-After
        return max((cost - tokens) / limit.rate, 1e-3)

    def _evict(self, now: float) -> None:
        """Drop buckets that have refilled completely: forgetting them changes no answer."""
        for key, (tokens, last) in list(self._buckets.items()):
            limit = self.limit_for(key)
            if tokens + (now - last) * limit.rate >= limit.capacity:
                del self._buckets[key]

    def __len__(self) -> int:
        return len(self._buckets)


def _limit_from(raw: Any, where: str) -> RateLimit:
    if not isinstance(raw, Mapping):
        raise ValueError(f"Rate limit {where} must be a mapping with requests, per_seconds and burst.")
    unknown = set(raw) - {"requests", "per_seconds", "burst"}
    if unknown:
        raise ValueError(f"Rate limit {where} has unknown keys {sorted(unknown)}.")
    try:
        return RateLimit(
            requests=int(raw["requests"]),
            per_seconds=float(raw.get("per_seconds", 60.0)),
            burst=None if raw.get("burst") is None else int(raw["burst"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"Rate limit {where} is invalid ({exc}).") from None


def limiter_from_config(raw: Mapping[str, Any], *, clock: Clock = time.monotonic) -> RateLimiter:
    """``{"default": {"requests": 6000, "per_seconds": 60}, "keys": {"<key>": {...}}}`` -> RateLimiter."""
    default = _limit_from(raw.get("default", {"requests": DEFAULT_LIMIT.requests}), "default")
    keys = raw.get("keys", {})
    if keys is None:
        keys = {}
    if not isinstance(keys, Mapping):
        raise ValueError("Rate limit keys must be a mapping of key to limit.")
    per_key = {str(k): _limit_from(v, f"for key {str(k)[:4]}…") for k, v in keys.items()}
    return RateLimiter(default, per_key=per_key, clock=clock)


def retry_after_header(seconds: float) -> str:
    """The ``Retry-After`` value: whole seconds, rounded up, at least 1."""
    if math.isinf(seconds):
        return "3600"
    return str(max(1, math.ceil(seconds)))
