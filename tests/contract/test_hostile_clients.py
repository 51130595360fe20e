"""Slow and hostile clients against the ingress routes served by uvicorn (the server Ray's proxy runs too):
slow headers, a slow body and a stalled SSE reader do not hold up other clients; a body beyond the limit is
answered 413 at the limit, not read whole; SSE sends keep-alive comments while the answer is being worked on.
"""

from __future__ import annotations

import asyncio
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.testclient import TestClient

from judge.types import JudgeItem
from serve_app.ingress import KEEPALIVE
from serve_app.runtime import factory
from tests.support.judges import ScriptedJudge
from tests.support.net import serving
from tests.support.service import BUDGET_QUESTION, HEADERS, build_pipeline, config


def test_sse_sends_keepalive_comments_while_the_judge_works(
    demo_index: Path, demo_retriever: Any, tmp_path: Path
) -> None:
    async def slow(_call: int, _items: list[JudgeItem]) -> None:
        await asyncio.sleep(1.5)  # the rule judge decides after this

    cfg = config(tmp_path, demo_index)
    pipeline = build_pipeline(cfg, demo_retriever, judge=ScriptedJudge(hook=slow, default="rules"))
    with TestClient(factory.build_inprocess_app(cfg, pipeline=pipeline, sse_keepalive_s=0.2)) as client:
        r = client.post("/query/v2/stream", json={"query": BUDGET_QUESTION}, headers=HEADERS)
    assert r.status_code == 200
    text = r.text
    assert text.count(KEEPALIVE) >= 3, text[:500]
    assert text.index(KEEPALIVE) < text.index("event: annotations") < text.index("event: done")
    assert text.rstrip().splitlines()[0].startswith("event: tool.started")  # first frame is an event


@pytest.fixture(scope="module")
def server(
    demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int]]:
    cfg = config(tmp_path_factory.mktemp("hostile"), demo_index)
    app = factory.build_inprocess_app(cfg, pipeline=build_pipeline(cfg, demo_retriever))
    with serving(app) as base:
        address = urlsplit(base)
        yield str(address.hostname), int(address.port or 0)


def _connect(addr: tuple[str, int]) -> socket.socket:
    s = socket.create_connection(addr, timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return s


@pytest.mark.slow
def test_slow_and_stalled_clients_do_not_hold_up_others(server: tuple[str, int]) -> None:
    host, port = server
    base = f"http://{host}:{port}"
    hostile: list[socket.socket] = []
    stop = threading.Event()

    def trickle(sock: socket.socket, data: bytes) -> None:
        for byte in data:
            if stop.wait(0.3):
                return
            try:
                sock.send(bytes([byte]))
            except OSError:
                return

    try:
        # Slow headers: request lines that arrive a byte at a time and never end.
        for _ in range(10):
            s = _connect(server)
            hostile.append(s)
            threading.Thread(
                target=trickle,
                args=(s, b"POST /search HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 500),
                daemon=True,
            ).start()
        # Slow body: complete headers, then a body that trickles in.
        for _ in range(5):
            s = _connect(server)
            hostile.append(s)
            s.sendall(
                b"POST /search HTTP/1.1\r\nHost: x\r\nX-API-Key: test-key\r\nContent-Type: application/json"
                b"\r\nContent-Length: 1000\r\n\r\n"
            )
            threading.Thread(target=trickle, args=(s, b'{"query": "' + b"a" * 980), daemon=True).start()
        # Stalled SSE readers: ask for a stream and never read it.
        body = b'{"query": "Berapa anggaran pendidikan Aceh tahun 2023?"}'
        for _ in range(5):
            s = _connect(server)
            hostile.append(s)
            s.sendall(
                b"POST /query/v2/stream HTTP/1.1\r\nHost: x\r\nX-API-Key: test-key\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
        time.sleep(1.0)
        latencies = []
        with httpx.Client(base_url=base, headers=HEADERS, timeout=30, trust_env=False) as client:
            for _ in range(10):
                started = time.perf_counter()
                r = client.post("/search", json={"query": "anggaran pendidikan"})
                latencies.append(time.perf_counter() - started)
                assert r.status_code == 200
            r = client.post("/query/v2", json={"query": BUDGET_QUESTION})
            assert r.status_code == 200 and r.json()["claims"]
        assert max(latencies) < 5.0, latencies
    finally:
        stop.set()
        for s in hostile:
            s.close()


@pytest.mark.slow
def test_a_body_beyond_the_limit_is_refused_at_the_limit_not_read_whole(server: tuple[str, int]) -> None:
    """A chunked 10 MB body (no Content-Length to refuse up front): the 413 comes back while the client is
    still sending, after about the 64 KiB limit, not after the whole body."""
    s = _connect(server)
    s.sendall(
        b"POST /query/v2 HTTP/1.1\r\nHost: x\r\nX-API-Key: test-key\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"%x\r\n%s\r\n" % (8192, b"x" * 8192)
    sent, answer = 0, b""
    try:
        while sent < 10_000_000:
            readable, _, _ = select.select([s], [], [], 0.01)
            if readable:
                break
            try:
                s.sendall(chunk)
            except OSError:
                break  # the server closed the connection after answering
            sent += 8192
        s.settimeout(10)
        answer = s.recv(4096)
    finally:
        s.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < 1_000_000, f"{sent} bytes were sent before the 413"
