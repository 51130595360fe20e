from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping

import pytest

from serve_app.guard.ratelimit import (
    DEFAULT_LIMIT,
    RateLimit,
    RateLimiter,
    limiter_from_config,
    retry_after_header,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeClock]:
    """The ``limits`` memory storage and the Retry-After both read ``time.time()``: move it by hand."""
    fake = FakeClock()
    monkeypatch.setattr(time, "time", fake)
    yield fake


def test_limit_then_retry_after_then_the_oldest_request_leaves(clock: FakeClock) -> None:
    limiter = RateLimiter(RateLimit(requests=3, per_seconds=60))
    assert [limiter.check("k") for _ in range(3)] == [None, None, None]
    assert limiter.check("k") == pytest.approx(60.0)
    clock.now += 59.0
    assert limiter.check("k") == pytest.approx(1.0)
    clock.now += 1.001  # the library counts a request exactly one window old as still inside it
    assert [limiter.check("k") for _ in range(3)] == [None, None, None]  # all three left together
    assert limiter.check("k") is not None


def test_the_window_edge_never_allows_twice_the_limit(clock: FakeClock) -> None:
    """The limit just before a minute boundary and again just after it: a fixed window (or a token bucket
    holding a whole window) admits both; the moving window admits the second lot only a window later."""
    limiter = RateLimiter(RateLimit(requests=10, per_seconds=60))
    clock.now = 60 * math.floor(clock.now / 60) + 59.0  # one second before a fixed window would reset
    assert all(limiter.check("k") is None for _ in range(10))
    clock.now += 2.0
    assert [limiter.check("k") for _ in range(10)] == [pytest.approx(58.0)] * 10
    clock.now += 58.001
    assert limiter.check("k") is None


def test_no_span_of_one_window_holds_more_than_the_limit(clock: FakeClock) -> None:
    """A client that bursts and then keeps sending one request a second for three minutes: every
    60-second span of admitted requests holds at most the limit (a token bucket admitted ~2x here)."""
    limiter = RateLimiter(RateLimit(requests=20, per_seconds=60))
    admitted: list[float] = []
    for second in range(180):
        for _ in range(20 if second in (0, 70) else 1):
            if limiter.check("k") is None:
                admitted.append(clock.now)
        clock.now += 1.0
    assert max(sum(1 for t in admitted if start <= t < start + 60) for start in admitted) == 20
    assert len(admitted) == 60  # three windows' worth: the limit is reached, not undercut


def test_keys_are_independent_and_configurable(clock: FakeClock) -> None:
    limiter = RateLimiter(RateLimit(2, 60), per_key={"vip": RateLimit(5, 60)})
    assert all(limiter.check("vip") is None for _ in range(5))
    assert limiter.check("vip") is not None
    assert limiter.check("a") is None and limiter.check("a") is None
    assert limiter.check("a") is not None
    assert limiter.check("b") is None


def test_limit_key_applies_a_named_limit_to_each_own_counter(clock: FakeClock) -> None:
    """Partner users: each principal counts alone, under its partner's limit."""
    limiter = RateLimiter(RateLimit(1, 60), per_key={"partner-a": RateLimit(3, 60)})
    assert [limiter.check("a|u1", limit_key="partner-a") for _ in range(4)][-1] is not None
    assert limiter.check("a|u2", limit_key="partner-a") is None  # another user of the same partner
    assert limiter.check("b|u1", limit_key="partner-b") is None
    assert limiter.check("b|u1", limit_key="partner-b") is not None  # the default of 1


def test_per_minute_shorthand(clock: FakeClock) -> None:
    limiter = RateLimiter(per_minute=2)
    assert limiter.default == RateLimit(2, 60.0)
    assert limiter.check("k") is None and limiter.check("k") is None
    assert limiter.check("k") == pytest.approx(60.0)
    assert RateLimiter().default == DEFAULT_LIMIT
    with pytest.raises(ValueError):
        RateLimiter(RateLimit(1), per_minute=1)


def test_guard_processes_split_every_limit_so_the_sum_holds(clock: FakeClock) -> None:
    """Two guard processes (replicas) each admit half of a key's limit: together, the configured limit."""
    replicas = [
        RateLimiter(RateLimit(10, 60), per_key={"vip": RateLimit(5, 60)}, processes=2) for _ in range(2)
    ]
    admitted = sum(replica.check("k") is None for _ in range(10) for replica in replicas)
    assert admitted == 10
    assert replicas[0].limit_for("vip") == RateLimit(3, 60)  # rounded up: never below one
    assert RateLimit(1, 60).share(4) == RateLimit(1, 60)
    assert RateLimiter(per_minute=7, processes=1).default.requests == 7


def test_default_serves_32_clients_at_full_speed_on_one_key(clock: FakeClock) -> None:
    # 32 clients each sending 3 requests a second for a minute: 5,760 requests on one key.
    limiter = RateLimiter(DEFAULT_LIMIT)
    refused = 0
    for _ in range(60 * 3):
        clock.now += 1 / 3
        refused += sum(limiter.check("bench") is not None for _ in range(32))
    assert refused == 0


def test_cost_above_the_limit_never_fits(clock: FakeClock) -> None:
    limiter = RateLimiter(RateLimit(2, 60))
    assert limiter.check("k", cost=3) == math.inf
    assert retry_after_header(math.inf) == "3600"


def test_retry_after_header_rounds_up() -> None:
    assert retry_after_header(0.001) == "1"
    assert retry_after_header(1.2) == "2"
    assert retry_after_header(20.0) == "20"


def test_from_config_and_errors(clock: FakeClock) -> None:
    limiter = limiter_from_config(
        {"default": {"requests": 1, "per_seconds": 10}, "keys": {"admin-1": {"requests": 2}}}
    )
    assert limiter.check("x") is None and limiter.check("x") == pytest.approx(10.0)
    assert limiter.limit_for("admin-1") == RateLimit(2, 60.0)
    bad: Mapping[str, object]
    for bad in ({"default": {"requests": 0}}, {"default": {"per_seconds": 5}}, {"default": {"rps": 5}},
                {"default": [1]}, {"keys": []}, {"default": {"requests": 1, "per_seconds": 0.5}},
                {"default": {"requests": 1, "burst": 2}}):
        with pytest.raises(ValueError):
            limiter_from_config(bad)
    with pytest.raises(ValueError):
        RateLimit(requests=10, per_seconds=0)
