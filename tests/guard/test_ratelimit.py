from __future__ import annotations

import math
from collections.abc import Mapping

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
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_retry_after_then_refill() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit(requests=3, per_seconds=60), clock=clock)
    assert [limiter.check("k") for _ in range(3)] == [None, None, None]
    wait = limiter.check("k")
    assert wait is not None and wait == pytest.approx(20.0)  # one token every 20 s
    clock.now += 19.0
    assert limiter.check("k") == pytest.approx(1.0)
    clock.now += 1.0
    assert limiter.check("k") is None
    assert limiter.check("k") is not None


def test_keys_are_independent_and_configurable() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit(2, 60), per_key={"vip": RateLimit(5, 60)}, clock=clock)
    assert all(limiter.check("vip") is None for _ in range(5))
    assert limiter.check("vip") is not None
    assert limiter.check("a") is None and limiter.check("a") is None
    assert limiter.check("a") is not None
    assert limiter.check("b") is None


def test_per_minute_shorthand() -> None:
    clock = FakeClock()
    limiter = RateLimiter(per_minute=2, clock=clock)
    assert limiter.default == RateLimit(2, 60.0)
    assert limiter.check("k") is None and limiter.check("k") is None
    assert limiter.check("k") == pytest.approx(30.0)
    assert RateLimiter().default == DEFAULT_LIMIT
    with pytest.raises(ValueError):
        RateLimiter(RateLimit(1), per_minute=1)


def test_guard_processes_split_every_limit_so_the_sum_holds() -> None:
    """Two guard processes (replicas) each admit half of a key's limit: together, the configured limit."""
    clock = FakeClock()
    replicas = [
        RateLimiter(RateLimit(10, 60), per_key={"vip": RateLimit(5, 60, burst=3)}, processes=2, clock=clock)
        for _ in range(2)
    ]
    admitted = sum(replica.check("k") is None for _ in range(10) for replica in replicas)
    assert admitted == 10
    assert replicas[0].limit_for("vip") == RateLimit(3, 60, burst=2)  # rounded up: never below one
    assert RateLimit(1, 60).share(4) == RateLimit(1, 60)
    assert RateLimiter(per_minute=7, processes=1).default.requests == 7


def test_burst_smaller_than_window() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit(requests=60, per_seconds=60, burst=2), clock=clock)
    assert limiter.check("k") is None and limiter.check("k") is None
    assert limiter.check("k") == pytest.approx(1.0)


def test_default_serves_32_clients_at_full_speed_on_one_key() -> None:
    # 32 clients each sending 3 requests a second for a minute: 5,760 requests on one key.
    clock = FakeClock()
    limiter = RateLimiter(DEFAULT_LIMIT, clock=clock)
    refused = 0
    for _ in range(60 * 3):
        clock.now += 1 / 3
        refused += sum(limiter.check("bench") is not None for _ in range(32))
    assert refused == 0


def test_idle_buckets_are_evicted() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit(10, 1), clock=clock, max_keys=100)
    for i in range(100):
        limiter.check(f"key{i}")
    clock.now += 10
    limiter.check("new")
    assert len(limiter) <= 2


def test_cost_above_capacity_never_fits() -> None:
    limiter = RateLimiter(RateLimit(2, 60), clock=FakeClock())
    assert limiter.check("k", cost=3) == math.inf
    assert retry_after_header(math.inf) == "3600"


def test_retry_after_header_rounds_up() -> None:
    assert retry_after_header(0.001) == "1"
    assert retry_after_header(1.2) == "2"
    assert retry_after_header(20.0) == "20"


def test_from_config_and_errors() -> None:
    clock = FakeClock()
    limiter = limiter_from_config(
        {"default": {"requests": 1, "per_seconds": 10}, "keys": {"admin-1": {"requests": 2}}}, clock=clock
    )
    assert limiter.check("x") is None and limiter.check("x") == pytest.approx(10.0)
    assert limiter.limit_for("admin-1") == RateLimit(2, 60.0)
    bad: Mapping[str, object]
    for bad in ({"default": {"requests": 0}}, {"default": {"per_seconds": 5}}, {"default": {"rps": 5}},
                {"default": [1]}, {"keys": []}):
        with pytest.raises(ValueError):
            limiter_from_config(bad)
    with pytest.raises(ValueError):
        RateLimit(requests=10, per_seconds=0)
