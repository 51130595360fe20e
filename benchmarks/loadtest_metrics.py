"""What one load-test request yields (:class:`Outcome`) and what a run of them sums up to
(:class:`BenchmarkMetrics`: throughput, goodput against an SLO, latency quantiles, errors, verifications)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness import percentile

VERIFICATION_KINDS = ("full", "partial", "none")


@dataclass
class Outcome:
    ok: bool
    status: int | None  # HTTP status; None when no response came
    error: str | None  # the key in the error table: "429", "timeout", "stream_error_500", ...
    latency_s: float  # request sent -> response (or stream) complete
    wait_s: float = 0.0  # scheduled arrival -> sent (the event loop's lag, or the concurrency cap)
    waited_for_cap: bool = False
    verification: str | None = None
    fallback_used: bool | None = None
    fallback_reason: str | None = None
    first_delta_s: float | None = None  # stream: request sent -> first answer.delta frame
    terminal_frames: int | None = None  # stream only
    terminal_last: bool | None = None  # stream only: the last frame is a terminal one



@dataclass
class BenchmarkMetrics:
    route: str
    sent: int
    completed: int  # successful: 2xx, and for streams ended by exactly one `done`
    failed: int
    duration_s: float
    throughput_rps: float  # completed / duration
    goodput_rps: float  # completed within the SLO (counting any wait for the cap) / duration
    slo_ms: float
    slo_attainment: float | None  # completed within the SLO / sent
    mean_latency_ms: float | None
    p50_latency_ms: float | None
    p95_latency_ms: float | None
    p99_latency_ms: float | None
    max_latency_ms: float | None
    errors: dict[str, int]
    verification: dict[str, int]
    fallback_used: int
    fallback_reasons: dict[str, int]
    p50_first_delta_ms: float | None = None
    p95_first_delta_ms: float | None = None
    p99_first_delta_ms: float | None = None
    streams: int = 0
    streams_terminal_ok: int = 0
    streams_all_terminal_ok: bool | None = None  # every stream ended with exactly one terminal frame
    cap_waits: int = 0  # requests that waited for the concurrency cap
    p95_wait_ms: float | None = None  # among the requests that waited for the cap
    extra: dict[str, Any] = field(default_factory=dict)


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 2)


def _pct_ms(values: list[float], q: float) -> float | None:
    """A quantile in ms, or None when no request got that far (no streams, nobody waited)."""
    return _ms(percentile(values, q)) if values else None


def summarize(outcomes: list[Outcome], duration_s: float, *, route: str, slo_ms: float,
              sent: int | None = None) -> BenchmarkMetrics:
    good = [o for o in outcomes if o.ok]
    latencies = [o.latency_s for o in good]
    within = sum(1 for o in good if (o.latency_s + o.wait_s) * 1000 <= slo_ms)
    sent = len(outcomes) if sent is None else sent
    deltas = [o.first_delta_s for o in good if o.first_delta_s is not None]
    streams = [o for o in outcomes if o.terminal_frames is not None]
    terminal_ok = sum(1 for o in streams if o.terminal_frames == 1 and o.terminal_last)
    verification = Counter(o.verification for o in good if o.verification)
    waits = [o.wait_s for o in outcomes if o.waited_for_cap]
    return BenchmarkMetrics(
        route=route, sent=sent, completed=len(good), failed=sent - len(good), duration_s=round(duration_s, 3),
        throughput_rps=round(len(good) / duration_s, 3) if duration_s > 0 else 0.0,
        goodput_rps=round(within / duration_s, 3) if duration_s > 0 else 0.0,
        slo_ms=slo_ms, slo_attainment=round(within / sent, 4) if sent else None,
        mean_latency_ms=_ms(sum(latencies) / len(latencies)) if latencies else None,
        p50_latency_ms=_pct_ms(latencies, 0.50), p95_latency_ms=_pct_ms(latencies, 0.95),
        p99_latency_ms=_pct_ms(latencies, 0.99), max_latency_ms=_ms(max(latencies, default=None)),
        errors=dict(sorted(Counter(o.error for o in outcomes if o.error).items())),
        verification={k: verification.get(k, 0) for k in VERIFICATION_KINDS}
        | {k: v for k, v in verification.items() if k not in VERIFICATION_KINDS},
        fallback_used=sum(1 for o in good if o.fallback_used),
        fallback_reasons=dict(sorted(Counter(o.fallback_reason for o in good if o.fallback_reason).items())),
        p50_first_delta_ms=_pct_ms(deltas, 0.50), p95_first_delta_ms=_pct_ms(deltas, 0.95),
        p99_first_delta_ms=_pct_ms(deltas, 0.99),
        streams=len(streams), streams_terminal_ok=terminal_ok,
        streams_all_terminal_ok=(terminal_ok == len(streams)) if streams else None,
        cap_waits=len(waits), p95_wait_ms=_pct_ms(waits, 0.95),
    )
