"""The egress policy refuses a host off the allowlist before any connection is opened: a listening socket
that is not on the list must see no connection at all, while one on the list is reached."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from serve_app.agent.tools.base import Tool, ToolContext
from serve_app.agent.tools.bps import BpsTool
from serve_app.agent.tools.ckan import CkanPortal, OpenDataTool
from serve_app.agent.tools.egress import EgressDenied, EgressPolicy
from serve_app.config import SourcesConfig
from tests.support.agents import FakeRetriever, port_of


class Listener:
    """A bare TCP socket counting the connections it accepts (answers each with a minimal HTTP 200)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = int(self.sock.getsockname()[1])
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            with conn:
                conn.settimeout(1.0)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def test_a_host_off_the_list_is_refused_before_any_connection(listener: Listener) -> None:
    # 127.0.0.1 on another port and "localhost" (same machine, other name) are both off the list.
    policy = EgressPolicy.from_config(SourcesConfig(egress_allowlist=["127.0.0.1:1", "data.example.id"]))

    async def call(url: str) -> None:
        async with policy.client(timeout_s=2.0) as client:
            await client.get(url)

    for url in (f"http://127.0.0.1:{listener.port}/x", f"http://localhost:{listener.port}/x"):
        with pytest.raises(EgressDenied):
            asyncio.run(call(url))
    assert listener.accepted == 0


def test_a_host_on_the_list_is_reached(listener: Listener) -> None:
    policy = EgressPolicy([f"127.0.0.1:{listener.port}"])

    async def call() -> int:
        async with policy.client(timeout_s=2.0) as client:
            return (await client.get(f"http://127.0.0.1:{listener.port}/x")).status_code

    assert asyncio.run(call()) == 200
    assert listener.accepted == 1


def test_redirects_are_not_followed_off_the_list() -> None:
    # The allowed host answers with a redirect to a host off the list: the client never follows it.
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(302, headers={"location": "http://evil.example/"})

    policy = EgressPolicy(["data.example.id"])

    async def call() -> int:
        async with policy.client(timeout_s=2.0, transport=httpx.MockTransport(handler)) as client:
            return (await client.get("http://data.example.id/api")).status_code

    assert asyncio.run(call()) == 302
    assert seen == ["http://data.example.id/api"]


@pytest.mark.parametrize("kind", ["ckan", "bps"])
def test_live_tools_refused_by_the_policy_never_connect(listener: Listener, kind: str) -> None:
    url, egress = f"http://127.0.0.1:{listener.port}", EgressPolicy(["127.0.0.1:1"])
    tool: Tool = (
        OpenDataTool([CkanPortal("x", url)], egress=egress)
        if kind == "ckan"
        else BpsTool(url, api_key="k", egress=egress)
    )
    ctx = ToolContext(retriever=port_of(FakeRetriever([])), query="jumlah penduduk 2023", document_ids=None)
    result = asyncio.run(tool.run({}, ctx))
    assert (result.status, result.note) == ("not_allowed", "egress_denied")
    assert listener.accepted == 0
