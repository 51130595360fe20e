"""The limits before a body (wire/body_guard.py), on a real uvicorn server on 127.0.0.1: many slow-body
sockets are each answered (408 or 503) and closed, the probes answer meanwhile, an oversized Content-Length is
refused before any body byte, and a complete body reaches the app unchanged. Outcomes only: status codes and
closed sockets, with generous waits, never a measured duration."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from serve_app.runtime import factory
from serve_app.wire.body_guard import BodyGuardMiddleware, BodyLimits
from serve_app.wire.proxy_errors import middlewares
from tests.support.net import serving
from tests.support.service import HEADERS, build_pipeline, config

WAIT_S = 60.0  # how long a socket may take to be answered: far beyond any deadline used here


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse({"bytes": len(await request.body())})


async def _health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


def _guarded(limits: BodyLimits) -> BodyGuardMiddleware:
    inner = Starlette(
        routes=[Route("/echo", _echo, methods=["POST"]), Route("/healthz", _health, methods=["GET"])]
    )
    return BodyGuardMiddleware(inner, limits=limits)


@pytest.fixture()
def addr_of() -> Iterator[Any]:
    stack: list[Any] = []

    def start(app: Any) -> tuple[str, int]:
        cm = serving(app)
        base = cm.__enter__()
        stack.append(cm)
        u = urlsplit(base)
        return str(u.hostname), int(u.port or 0)

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


def _slow_socket(addr: tuple[str, int], path: str = "/echo", key: bool = False) -> socket.socket:
    """Headers that promise 5,000 bytes, then one byte of body, and nothing more."""
    s = socket.create_connection(addr, timeout=WAIT_S)
    extra = b"X-API-Key: test-key\r\n" if key else b""
    s.sendall(
        b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra
        + b"Content-Length: 5000\r\n\r\n{"
    )
    return s


def _answer_and_close(s: socket.socket) -> tuple[int, bool]:
    """The status the server answered and whether it then closed the socket (recv returns b"")."""
    data = b""
    try:
        while True:
            piece = s.recv(65536)
            if not piece:
                closed = True
                break
            data += piece
    except OSError:
        closed = False
    finally:
        s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
    return status, closed


def _wait_for(condition: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_slow_bodies_are_answered_408_and_closed_while_the_probe_answers(addr_of: Any) -> None:
    guard = _guarded(BodyLimits(read_deadline_s=5.0, max_readers=1000))
    addr = addr_of(guard)
    sockets = [_slow_socket(addr) for _ in range(60)]
    with httpx.Client(base_url=f"http://{addr[0]}:{addr[1]}", timeout=WAIT_S, trust_env=False) as client:
        assert client.get("/healthz").status_code == 200
        assert client.post("/echo", content=b'{"a": 1}').json() == {"bytes": 8}
    outcomes = [_answer_and_close(s) for s in sockets]
    assert outcomes == [(408, True)] * 60
    assert guard.readers == 0


def test_slow_readers_beyond_the_bound_get_503_and_complete_bodies_still_pass(addr_of: Any) -> None:
    # an ample grace: the complete body below is never late for it, the slow socket is refused after it
    guard = _guarded(BodyLimits(read_deadline_s=120.0, max_readers=3, busy_grace_s=3.0))
    addr = addr_of(guard)
    held = [_slow_socket(addr) for _ in range(3)]
    _wait_for(lambda: guard.readers == 3)
    extra = [_slow_socket(addr) for _ in range(5)]
    for s in extra:
        status, closed = _answer_and_close(s)  # answered long before the 120 s deadline of the held ones
        assert (status, closed) == (503, True)
    with httpx.Client(base_url=f"http://{addr[0]}:{addr[1]}", timeout=WAIT_S, trust_env=False) as client:
        assert client.get("/healthz").status_code == 200
        # a body complete on arrival needs no waiting: it passes at the bound and takes no place
        assert client.post("/echo", content=b'{"a": 1}').json() == {"bytes": 8}
    busy, data = _slow_socket(addr), b""
    while piece := busy.recv(65536):  # the server answers, then closes
        data += piece
    busy.close()
    assert data.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in data.lower() and b"not_ready" in data
    assert guard.readers == 3
    for s in held:
        s.close()
    _wait_for(lambda: guard.readers == 0)  # a client that leaves frees its place


def test_an_oversized_content_length_is_413_before_any_body_byte(addr_of: Any) -> None:
    guard = _guarded(BodyLimits(max_body_bytes=1000, read_deadline_s=120.0))
    addr = addr_of(guard)
    s = socket.create_connection(addr, timeout=WAIT_S)
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n")  # no body byte
    assert _answer_and_close(s) == (413, True)
    assert guard.readers == 0


def test_a_chunked_body_that_stalls_is_408_and_one_that_grows_past_the_limit_413(addr_of: Any) -> None:
    addr = addr_of(_guarded(BodyLimits(max_body_bytes=1000, read_deadline_s=2.0)))
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    stalled = socket.create_connection(addr, timeout=WAIT_S)
    stalled.sendall(head + b"1\r\n{\r\n")
    assert _answer_and_close(stalled) == (408, True)
    big = socket.create_connection(addr, timeout=WAIT_S)
    big.sendall(head + b"800\r\n" + b"x" * 0x800 + b"\r\n")
    assert _answer_and_close(big) == (413, True)


def test_a_complete_body_reaches_the_app_unchanged(addr_of: Any) -> None:
    guard = _guarded(BodyLimits(max_body_bytes=100_000))
    addr = addr_of(guard)
    with httpx.Client(base_url=f"http://{addr[0]}:{addr[1]}", timeout=WAIT_S, trust_env=False) as client:
        assert client.post("/echo", content=b"y" * 99_999).json() == {"bytes": 99_999}
        chunks = iter([b"a" * 10, b"b" * 20])
        assert client.post("/echo", content=chunks).json() == {"bytes": 30}
    assert guard.readers == 0


def test_the_limits_reach_rays_proxy_through_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from serve_app.config import AppConfig, LimitsConfig
    from serve_app.runtime.serve_runner import body_limits, ray_env

    cfg = AppConfig(limits=LimitsConfig(body_read_deadline_s=3.5, max_body_readers=7))
    for k, v in ray_env(cfg).items():
        monkeypatch.setenv(k, v)
    guard = middlewares()[0]
    assert guard.cls is BodyGuardMiddleware
    assert guard.kwargs["limits"] == body_limits(cfg) == BodyLimits(65536, 3.5, 7, 0.25)


@pytest.mark.slow
def test_the_ingress_answers_slow_bodies_with_and_without_a_key(
    demo_index: Path, demo_retriever: Any, tmp_path: Path, addr_of: Any
) -> None:
    """The real routes: slow bodies to /query/v2, with a key and without, are each answered 408 and closed
    while /healthz, /metrics and a valid /search answer; a complete request keeps the contract's order."""
    cfg = config(tmp_path, demo_index, limits={"body_read_deadline_s": 2.0})
    app = factory.build_inprocess_app(cfg, pipeline=build_pipeline(cfg, demo_retriever))
    addr = addr_of(app)
    sockets = [_slow_socket(addr, "/query/v2", key=i % 2 == 0) for i in range(40)]
    with httpx.Client(base_url=f"http://{addr[0]}:{addr[1]}", timeout=WAIT_S, trust_env=False) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/metrics").status_code == 200
        assert client.post("/search", json={"query": "anggaran"}, headers=HEADERS).status_code == 200
        assert client.post("/search", json={"query": "anggaran"}).status_code == 401
        assert client.post("/search", content=b"{", headers=HEADERS).status_code == 400
        too_big = b'{"query": "' + b"a" * cfg.limits.max_body_bytes + b'"}'
        assert client.post("/search", content=too_big).status_code == 413  # before the 401
    assert [_answer_and_close(s) for s in sockets] == [(408, True)] * 40


def test_at_the_bound_a_body_that_misses_the_grace_is_503_and_one_that_arrives_passes() -> None:
    """The guard alone, on a scripted ASGI receive: no server, no clock race (the grace is 0, or ample)."""
    import asyncio

    def run(limits: BodyLimits, messages: list[dict[str, Any]]) -> int:
        guard = _guarded(limits)
        guard.readers = limits.max_readers  # every place is taken
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await asyncio.sleep(3600)  # a client that sends nothing more
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/echo", "headers": [(b"content-length", b"8")],
                 "query_string": b"", "http_version": "1.1", "scheme": "http", "server": ("t", 80)}
        asyncio.run(guard(scope, receive, send))  # type: ignore[arg-type]
        assert guard.readers == limits.max_readers  # a request at the bound never took a place
        return int(sent[0]["status"])

    complete = {"type": "http.request", "body": b'{"a": 1}', "more_body": False}
    partial = {"type": "http.request", "body": b'{"a"', "more_body": True}
    assert run(BodyLimits(max_readers=2, busy_grace_s=0.0), [dict(partial)]) == 503
    assert run(BodyLimits(max_readers=2, busy_grace_s=60.0), [dict(partial), dict(complete)]) == 200
    assert run(BodyLimits(max_readers=2, busy_grace_s=0.0), [dict(complete)]) == 200


def test_a_refusal_is_sent_whole_before_the_rest_of_the_body_is_drained_and_the_socket_closed() -> None:
    """A lingering close, on a scripted ASGI receive (no server, no clock): the answer goes out in full while
    the connection stays open, the client's remaining body is read and dropped, then the response ends."""
    import asyncio

    events: list[str] = []
    messages = [
        {"type": "http.request", "body": b"x" * 600, "more_body": True},
        {"type": "http.request", "body": b"x" * 600, "more_body": True},  # past the limit: 413
        {"type": "http.request", "body": b"x" * 600, "more_body": True},  # still arriving: drained
        {"type": "http.request", "body": b"x", "more_body": False},
    ]

    async def receive() -> dict[str, Any]:
        events.append("receive")
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            events.append(f"start {message['status']}")
        else:
            events.append("body" + (" (open)" if message["more_body"] else " (end)"))

    chunked = [(b"transfer-encoding", b"chunked")]
    scope = {"type": "http", "method": "POST", "path": "/echo", "headers": chunked, "query_string": b"",
             "http_version": "1.1", "scheme": "http", "server": ("t", 80)}
    guard = _guarded(BodyLimits(max_body_bytes=1000))
    asyncio.run(guard(scope, receive, send))  # type: ignore[arg-type]
    assert events == ["receive", "receive", "start 413", "body (open)", "receive", "receive", "body (end)"]
    assert messages == [] and guard.readers == 0
