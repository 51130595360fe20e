"""Per-key and per-principal rate limits for the Guard: a moving window from the ``limits`` library.

One :class:`RateLimiter` per scope. ``check(key)`` counts one request and returns ``None`` when it may go
ahead, or the seconds until the oldest request in the window leaves it (the ``Retry-After`` of a 429).

Why a moving window: a fixed window (and a token bucket whose burst is a whole window) lets a client send
its limit just before a window edge and again just after it, twice the limit within one window's length.
The moving window remembers when each admitted request came, so no span of ``per_seconds`` ever holds more
than ``requests``. It costs one timestamp per admitted request per key; ``limits`` drops expired entries.

Counters are per process: with N guard processes each enforces 1/N of every limit (``processes``). The
conversation store offers the exact cross-replica limiter for /playground. ``limits``' memory storage reads
``time.time()``; tests move that clock instead of sleeping.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter


@dataclass(frozen=True)
class RateLimit:
    """``requests`` per ``per_seconds`` (a whole number of seconds: the library's granularity)."""

    requests: int
    per_seconds: float = 60.0

    def __post_init__(self) -> None:
        if self.requests < 1 or self.per_seconds < 1 or self.per_seconds != int(self.per_seconds):
            raise ValueError(f"Rate limit {self} needs requests >= 1 and per_seconds a whole number >= 1.")

    def share(self, processes: int) -> RateLimit:
        """This process's part when ``processes`` guards split one key's traffic evenly (rounded up)."""
        if processes <= 1:
            return self
        return RateLimit(math.ceil(self.requests / processes), self.per_seconds)

    def item(self) -> RateLimitItemPerSecond:
        return RateLimitItemPerSecond(self.requests, int(self.per_seconds), namespace="aceh")


# Sized so 32 concurrent benchmark clients on one key are never throttled (100 requests a second).
DEFAULT_LIMIT = RateLimit(requests=6000, per_seconds=60.0)


class RateLimiter:
    """Moving windows keyed by a caller id; ``per_key`` overrides the default for named ids."""

    def __init__(
        self,
        default: RateLimit | None = None,
        *,
        per_minute: int | None = None,
        per_key: Mapping[str, RateLimit] | None = None,
        processes: int = 1,
    ) -> None:
        """``default`` or, as a shorthand, ``per_minute`` requests per 60 s (not both).

        ``processes``: how many guard processes (replicas) share the traffic. Windows live in memory, so
        each keeps its share of every limit; Ray Serve spreads requests evenly over replicas, so the sum
        stays the configured limit (up to rounding) without a shared counter on every request's path."""
        if default is not None and per_minute is not None:
            raise ValueError("Give either a default rate limit or per_minute, not both.")
        if per_minute is not None:
            default = RateLimit(requests=per_minute, per_seconds=60.0)
        self.default = (default or DEFAULT_LIMIT).share(processes)
        self._per_key = {key: limit.share(processes) for key, limit in (per_key or {}).items()}
        self._items = {limit: limit.item() for limit in (self.default, *self._per_key.values())}
        self._windows = MovingWindowRateLimiter(MemoryStorage())

    def limit_for(self, key: str) -> RateLimit:
        return self._per_key.get(key, self.default)

    def check(self, key: str, cost: int = 1, *, limit_key: str | None = None) -> float | None:
        """Count ``cost`` requests of ``key``: ``None`` if allowed, else seconds to wait (always > 0).
        ``limit_key`` names whose limit applies when it is not ``key``'s own (a partner's for its users)."""
        limit = self.limit_for(key if limit_key is None else limit_key)
        if cost > limit.requests:
            return math.inf  # can never be served; the caller answers 429 with its longest Retry-After
        item = self._items[limit]
        if self._windows.hit(item, key, cost=cost):
            return None
        reset = self._windows.get_window_stats(item, key).reset_time
        return max(reset - time.time(), 1e-3)


def _limit_from(raw: Any, where: str) -> RateLimit:
    if not isinstance(raw, Mapping):
        raise ValueError(f"Rate limit {where} must be a mapping with requests and per_seconds.")
    unknown = set(raw) - {"requests", "per_seconds"}
    if unknown:
        raise ValueError(f"Rate limit {where} has unknown keys {sorted(unknown)}.")
    try:
        return RateLimit(requests=int(raw["requests"]), per_seconds=float(raw.get("per_seconds", 60.0)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"Rate limit {where} is invalid ({exc}).") from None


def limiter_from_config(raw: Mapping[str, Any]) -> RateLimiter:
    """``{"default": {"requests": 6000, "per_seconds": 60}, "keys": {"<key>": {...}}}`` -> RateLimiter."""
    default = _limit_from(raw.get("default", {"requests": DEFAULT_LIMIT.requests}), "default")
    keys = raw.get("keys", {})
    if keys is None:
        keys = {}
    if not isinstance(keys, Mapping):
        raise ValueError("Rate limit keys must be a mapping of key to limit.")
    per_key = {str(k): _limit_from(v, f"for key {str(k)[:4]}…") for k, v in keys.items()}
    return RateLimiter(default, per_key=per_key)


def retry_after_header(seconds: float) -> str:
    """The ``Retry-After`` value: whole seconds, rounded up, at least 1."""
    if math.isinf(seconds):
        return "3600"
    return str(max(1, math.ceil(seconds)))
