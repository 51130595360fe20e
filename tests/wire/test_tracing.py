"""Request ids and W3C trace context: accepted when valid, replaced when not, returned as ``X-Request-ID`` on
every response (errors and streams too), and carried by every JSON log line of the request; the verdict mix
and ``unverified_reason`` counts on ``/metrics``."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from judge.types import JudgeItem
from serve_app.wire.tracing import LOGGERS, configure_logging, trace_id_from, valid_request_id
from tests.support.judges import ScriptedJudge
from tests.support.service import BUDGET_QUESTION, HEADERS, client_for, config

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
HEX32 = re.compile(r"[0-9a-f]{32}")


def test_request_id_is_a_bounded_token() -> None:
    assert valid_request_id("abc-123_x.y:z") == "abc-123_x.y:z"
    assert valid_request_id("a" * 128) is not None
    for bad in (None, "", "a" * 129, "has space", "new\nline", '"quoted"', "-leading", "ünïcode"):
        assert valid_request_id(bad) is None, bad


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (TRACEPARENT, TRACE_ID),
        (f"01-{TRACE_ID}-00f067aa0ba902b7-01-future-field", TRACE_ID),  # a later version may add fields
        (f"00-{TRACE_ID}-00f067aa0ba902b7-01-extra", None),  # version 00 has exactly four fields
        (f"ff-{TRACE_ID}-00f067aa0ba902b7-01", None),
        (f"00-{'0' * 32}-00f067aa0ba902b7-01", None),
        (f"00-{TRACE_ID}-{'0' * 16}-01", None),
        (f"00-{TRACE_ID.upper()}-00f067aa0ba902b7-01", None),
        ("00-abc-def-01", None),
        (None, None),
    ],
)
def test_traceparent(header: str | None, expected: str | None) -> None:
    assert trace_id_from(header) == expected


@pytest.fixture()
def log_stream() -> Iterator[io.StringIO]:
    """Our loggers write JSON lines into a buffer for the test; their previous setup is put back after."""
    saved = [(logging.getLogger(n), logging.getLogger(n).handlers[:], logging.getLogger(n).level,
              logging.getLogger(n).propagate) for n in LOGGERS]
    stream = io.StringIO()
    configure_logging(logging.DEBUG, stream=stream)
    yield stream
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


@pytest.fixture(scope="module")
def client(
    demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    def down(_call: int, _items: list[JudgeItem]) -> None:
        raise ConnectionError("judge unreachable")

    cfg = config(tmp_path_factory.mktemp("tracing"), demo_index)
    with client_for(cfg, demo_retriever, judge=ScriptedJudge(hook=down, default="rules")) as c:
        yield c


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_every_response_carries_the_request_id(client: TestClient) -> None:
    given = {"X-Request-ID": "client-42", "traceparent": TRACEPARENT}
    responses = [
        client.get("/healthz", headers=given),
        client.get("/metrics", headers=given),
        client.get("/openapi.json", headers=given),
        client.post("/search", json={"query": "pendidikan"}, headers={**HEADERS, **given}),
        client.post("/search", json={"query": "pendidikan"}, headers=given),  # 401
        client.post("/search", content=b"{", headers={**HEADERS, **given}),  # 400
        client.post("/search", content=b"x" * 70_000, headers={**HEADERS, **given}),  # 413
        client.get("/conversations/none", headers={**HEADERS, **given}),  # 404
        client.post("/query/v2/stream", json={"query": BUDGET_QUESTION}, headers={**HEADERS, **given}),
    ]
    assert [r.status_code for r in responses] == [200, 200, 200, 200, 401, 400, 413, 404, 200]
    for r in responses:
        assert r.headers.get_list("x-request-id") == ["client-42"], r.request.url


@pytest.mark.parametrize("sent", [None, "bad id", "x" * 129, "ok\x7f"])
def test_a_missing_or_invalid_request_id_is_replaced(client: TestClient, sent: str | None) -> None:
    headers = dict(HEADERS) if sent is None else {**HEADERS, "X-Request-ID": sent}
    r = client.post("/search", json={"query": "pendidikan"}, headers=headers)
    assert r.status_code == 200
    assert HEX32.fullmatch(r.headers["x-request-id"])


def test_every_log_line_of_a_request_carries_its_ids(client: TestClient, log_stream: io.StringIO) -> None:
    given = {"X-Request-ID": "req-7", "traceparent": TRACEPARENT}
    r = client.post("/search", json={"query": "x"}, headers={"X-API-Key": "wrong", **given})
    assert r.status_code == 401
    lines = _lines(log_stream)
    messages = [line["message"] for line in lines]
    assert any("authentication rejected" in m for m in messages) and "request" in messages
    for line in lines:
        assert (line["request_id"], line["trace_id"]) == ("req-7", TRACE_ID), line
    access = next(line for line in lines if line["message"] == "request")
    assert (access["path"], access["status"], access["method"]) == ("/search", 401, "POST")

    log_stream.truncate(0)
    log_stream.seek(0)
    client.post("/search", json={"query": "x"}, headers={"X-API-Key": "wrong"})
    (auth, access) = _lines(log_stream)
    assert auth["request_id"] == access["request_id"] and auth["request_id"] != "req-7"
    assert HEX32.fullmatch(auth["trace_id"]) and auth["trace_id"] == access["trace_id"] != TRACE_ID


def _sample(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith(f"{name}{{{wanted}}} "):
            return float(line.split()[-1])
    return 0.0


def test_metrics_count_the_verdict_mix_and_unverified_reasons(client: TestClient) -> None:
    before = client.get("/metrics").text
    body = client.post("/query/v2", json={"query": BUDGET_QUESTION}, headers=HEADERS).json()
    after = client.get("/metrics").text
    claims = len(body["claims"])
    assert claims and {c["unverified_reason"] for c in body["claims"]} == {"judge_unavailable"}
    for name, labels, added in [
        ("aceh_claim_verdicts_total", {"verdict": "unverified"}, claims),
        ("aceh_unverified_claims_total", {"reason": "judge_unavailable"}, claims),
        ("aceh_answers_total", {"verification": "none"}, 1),
        ("aceh_answers_total", {"verification": "full"}, 0),
    ]:
        assert _sample(after, name, **labels) - _sample(before, name, **labels) == added, (name, labels)


def test_ids_cross_into_other_deployments_through_rays_request_context() -> None:
    """Behind Ray's proxy the middleware writes trace_id:request_id into Ray's request context, which Ray
    copies into every handle call; a replica of another deployment reads its log ids from there."""
    import asyncio

    from ray.serve import context

    from serve_app.wire.tracing import TraceFilter, TraceMiddleware

    ray_context: Any = context._serve_request_context  # typed as holding None only

    seen: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen["ray"] = ray_context.get().request_id
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def call() -> list[dict[str, Any]]:
        ray_context.set(context._RequestContext(request_id="from-proxy"))
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": "/", "headers": [
            (b"x-request-id", b"req-9"), (b"traceparent", TRACEPARENT.encode())]}
        await TraceMiddleware(app, behind_ray_proxy=True)(scope, None, send)  # type: ignore[arg-type]
        return sent

    sent = asyncio.run(call())
    assert seen["ray"] == f"{TRACE_ID}:req-9"
    assert not any(k == b"x-request-id" for k, _ in sent[0]["headers"])  # Ray's proxy echoes it

    async def downstream() -> logging.LogRecord:
        ray_context.set(context._RequestContext(request_id=seen["ray"]))
        record = logging.LogRecord("serve_app.x", logging.INFO, __file__, 1, "m", None, None)
        TraceFilter().filter(record)
        return record

    record = asyncio.run(downstream())
    assert (record.request_id, record.trace_id) == ("req-9", TRACE_ID)  # type: ignore[attr-defined]


def test_served_by_names_the_node_on_every_response_and_counts_it() -> None:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import PlainTextResponse, StreamingResponse
    from starlette.routing import Route

    from serve_app.wire.tracing import SERVED_BY_HEADER, ServedByMiddleware

    counted: list[int] = []

    async def stream(request: Any) -> StreamingResponse:
        async def body() -> Any:
            yield b"a"
            yield b"b"

        return StreamingResponse(body(), media_type="text/plain")

    async def plain(request: Any) -> PlainTextResponse:
        return PlainTextResponse("ok")

    app = Starlette(
        routes=[Route("/plain", plain), Route("/stream", stream)],
        middleware=[Middleware(ServedByMiddleware, node_id="node-a", on_response=lambda: counted.append(1))],
    )
    with TestClient(app) as client:
        for path, status in (("/plain", 200), ("/stream", 200), ("/missing", 404)):
            response = client.get(path)
            assert response.status_code == status
            assert response.headers[SERVED_BY_HEADER] == "node-a"
        assert client.get("/stream").text == "ab"
    assert len(counted) == 4
