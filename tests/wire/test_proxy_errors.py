"""The middleware Ray's proxy runs: a request whose Ingress replica died gets the contract's 503 (or one SSE
``error`` frame once a stream started), and every answer the Ingress sent passes through untouched."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from ray.exceptions import ActorDiedError
from starlette.types import Message, Receive, Scope, Send

from serve_app.runtime.serve_runner import RAY_ENV
from serve_app.wire.body_guard import BodyGuardMiddleware
from serve_app.wire.proxy_errors import ReplicaLostMiddleware, middlewares

App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _scope(request_id: str | None = None) -> Scope:
    headers = [(b"x-request-id", request_id.encode())] if request_id is not None else []
    return {"type": "http", "method": "POST", "path": "/query/v2", "headers": headers}


def _run(app: App, scope: Scope | None = None) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(ReplicaLostMiddleware(app)(scope or _scope(), receive, send))
    return sent


def _body(sent: list[Message]) -> bytes:
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


async def _dies_before_answering(scope: Scope, receive: Receive, send: Send) -> None:
    raise ActorDiedError()


async def _returns_without_answering(scope: Scope, receive: Receive, send: Send) -> None:
    return None  # what Ray's proxy does after a replica died: it sends nothing for a 500


async def _stream_then_dies(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream; charset=utf-8")]})
    first = b"event: tool.started\ndata: {}\n\n"
    await send({"type": "http.response.body", "body": first, "more_body": True})
    raise ActorDiedError()


@pytest.mark.parametrize("app", [_dies_before_answering, _returns_without_answering])
def test_nothing_sent_is_the_contracts_503(app: App) -> None:
    sent = _run(app, _scope("client-id-1"))
    start = sent[0]
    assert start["type"] == "http.response.start" and start["status"] == 503
    headers = dict(start["headers"])
    assert headers[b"retry-after"] == b"1" and headers[b"x-request-id"] == b"client-id-1"
    assert json.loads(_body(sent)) == {"error": "not_ready", "detail": "Layanan belum siap."}
    assert sent[-1].get("more_body", False) is False


def test_an_invalid_request_id_is_not_echoed() -> None:
    sent = _run(_returns_without_answering, _scope("bad id with spaces"))
    rid = dict(sent[0]["headers"])[b"x-request-id"].decode()
    assert rid != "bad id with spaces" and len(rid) == 32


def test_a_started_stream_ends_with_one_error_frame() -> None:
    sent = _run(_stream_then_dies)
    text = _body(sent).decode()
    assert text.count("event: error") == 1 and text.endswith("\n\n")
    error = json.loads(text.split("event: error\ndata: ")[1])
    assert error["status"] == 503 and error["error"] == "not_ready"
    assert "Actor" not in text
    assert sent[-1]["more_body"] is False
    assert [m["type"] for m in sent].count("http.response.start") == 1


@pytest.mark.parametrize("status", [200, 404, 500])
def test_what_the_ingress_sent_passes_through(status: int) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b'{"ok": 1}', "more_body": False})

    sent = _run(app)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[0]["status"] == status and _body(sent) == b'{"ok": 1}'


def test_ray_imports_it_from_the_serve_environment() -> None:
    from ray.serve._private.http_util import validate_http_proxy_callback_return

    module, _, name = RAY_ENV["RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH"].partition(":")
    loaded: Any = getattr(__import__(module, fromlist=[name]), name)
    assert loaded is middlewares
    classes: list[Any] = [m.cls for m in validate_http_proxy_callback_return(loaded())]
    assert classes == [BodyGuardMiddleware, ReplicaLostMiddleware]  # slow bodies held in the proxy


@pytest.mark.parametrize(
    ("ids", "kept"),
    [
        ([b"bad id", b"0" * 32], [b"0" * 32]),  # Ray's echo of an invalid id, then the Ingress's own
        ([b"client-1"], [b"client-1"]),  # one id passes as it is
        ([b"client-1", b"client-1"], [b"client-1"]),
    ],
)
def test_the_response_carries_one_request_id(ids: list[bytes], kept: list[bytes]) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json")] + [(b"x-request-id", v) for v in ids]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}", "more_body": False})

    start = _run(app)[0]
    assert [v for k, v in start["headers"] if k == b"x-request-id"] == kept
    assert (b"content-type", b"application/json") in start["headers"]
