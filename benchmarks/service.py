"""Reaching a service that a benchmark starts: a free port to start it on, and the wait until it is healthy.
One home for what several benchmarks need (query_v2, graph_overhead, faults, soak, llm_vllm)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(base: str, timeout_s: float = 300.0, alive: Callable[[], bool] | None = None) -> None:
    """Poll ``/healthz`` until it answers 200; ``alive`` (e.g. "the server process still runs") ends the
    wait early when it turns false."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        if alive is not None and not alive():
            raise RuntimeError(f"the server stopped before it became healthy (last: {last})")
        try:
            r = httpx.get(f"{base}/healthz", timeout=10, trust_env=False)
            if r.status_code == 200:
                return
            last = f"{r.status_code} {r.text[:200]}"
        except httpx.HTTPError as exc:
            last = type(exc).__name__
        time.sleep(1.0)
    raise RuntimeError(f"the graph did not become healthy within {timeout_s:.0f} s (last: {last})")
