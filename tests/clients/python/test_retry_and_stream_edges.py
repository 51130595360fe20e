"""What the demo service cannot be made to do on demand, from a tiny real server: a Retry-After longer than
the client will wait, retries that run out, and a stream cut before its terminal frame."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aceh_rag_client import Client, RateLimited, RetryPolicy, StreamCut
from aceh_rag_client import models as m
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.live import serving

LIMITED = {"error": "rate_limited", "detail": "Terlalu banyak permintaan."}


def _app(calls: list[str], retry_after: str) -> Starlette:
    async def documents(request: Request) -> Response:
        calls.append(request.headers.get("x-api-key", ""))
        return JSONResponse(LIMITED, status_code=429, headers={"Retry-After": retry_after})

    async def stream(request: Request) -> Response:
        async def frames() -> AsyncIterator[str]:
            yield ": keep-alive\n\n"
            yield 'event: message.start\ndata: {"conversation_id": "c", "message_id": "m", "schema": ' \
                  '"annotate-v2"}\n\n'
            yield 'event: answer.delta\ndata: {"text": "Sebagian"}\n\n'  # then the connection ends

        return StreamingResponse(frames(), media_type="text/event-stream")

    routes = [Route("/documents", documents), Route("/query/v2/stream", stream, methods=["POST"])]
    return Starlette(routes=routes)


@pytest.mark.parametrize(("retry_after", "policy", "calls_made"), [
    ("0", RetryPolicy(max_retries=2), 3),  # retries run out: 1 + 2 calls, then RateLimited
    ("120", RetryPolicy(max_retries=5, max_wait_s=30), 1),  # longer than the client waits: no retry
])
def test_retries_are_bounded(retry_after: str, policy: RetryPolicy, calls_made: int) -> None:
    calls: list[str] = []
    with serving(_app(calls, retry_after)) as base, Client(base, api_key="k", retry=policy) as client:
        with pytest.raises(RateLimited) as limited:
            client.documents()
    assert len(calls) == calls_made and calls[0] == "k"
    assert limited.value.retry_after == float(retry_after)


def test_a_cut_stream_yields_what_came_then_raises() -> None:
    seen: list[Any] = []
    with serving(_app([], "0")) as base, Client(base, api_key="k") as client:
        with pytest.raises(StreamCut):
            for event in client.stream_v2("apa saja"):
                seen.append(event)
    assert [type(e) for e in seen] == [m.MessageStartEvent, m.AnswerDeltaEvent]
