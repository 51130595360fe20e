"""Network helpers for the tests that start a real server (a process, a Ray graph, a fake model server, an
ASGI app on uvicorn in a thread)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx

from benchmarks.inprocess import serving

__all__ = ["free_port", "free_ports", "serving", "wait_healthy"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports: each socket stays bound until all are chosen, since the OS may hand
    the port of a socket just closed to the next ``free_port()`` call (seen: two Ray components given one)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def wait_healthy(base: str, timeout_s: float = 300.0, alive: Callable[[], bool] | None = None) -> None:
    """Poll ``base/healthz`` until it answers 200. ``alive`` (e.g. "the server process still runs") ends
    the wait early, with the last answer seen, when it turns false."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    with httpx.Client(timeout=10, trust_env=False) as client:
        while time.monotonic() < deadline:
            if alive is not None and not alive():
                raise RuntimeError(f"the server stopped before it became healthy (last: {last})")
            try:
                response = client.get(f"{base}/healthz")
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            else:
                if response.status_code == 200:
                    return
                last = f"{response.status_code} {response.text[:200]}"
            time.sleep(1.0)
    raise RuntimeError(f"{base} did not become healthy within {timeout_s:.0f} s (last: {last})")
