"""benchmarks.loadtest against a small local Starlette app that mimics /query/v2 and its SSE stream."""

from __future__ import annotations

import asyncio
import json
import math
import socket
import statistics
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from benchmarks import loadtest
from benchmarks.loadtest import load_questions, poisson_arrivals, run_closed_loop, run_open_loop
from tests.support.net import serving

API_KEY = "secret-key-123"
TOKEN = "tok-abc"
FALLBACK = "query_budget_exhausted"


# ---------------------------------------------------------------------------- the mimic service


def _answer(kind: str) -> dict[str, Any]:
    verification = {"full": "full", "slow": "full", "medium": "full", "partial": "partial"}.get(kind, "none")
    fallback = kind == "fallback"
    return {"answer": f"jawaban {kind}", "fallback_used": fallback,
            "fallback_reason": FALLBACK if fallback else None,
            "faithfulness": {"verification": verification, "claims_total": 1}}


def _frame(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


class Mimic:
    """Behaviour by question: full/partial/none/fallback answer, ratelimited → 429, boom → 500,
    slow/medium/hang sleep first; on the stream also streamfail (error frame), unterminated, double
    (done then error)."""

    def __init__(self) -> None:
        self.received: list[str] = []

    async def _admit(self, request: Request) -> tuple[str, Response | None]:
        body = await request.json()
        kind = body["query"]
        self.received.append(kind)
        auth = request.headers.get("authorization")
        if request.headers.get("x-api-key") != API_KEY or (auth is not None and auth != f"Bearer {TOKEN}"):
            return kind, JSONResponse({"error": "unauthorized", "detail": "x"}, status_code=401)
        await asyncio.sleep({"slow": 0.4, "medium": 0.1, "hang": 3.0}.get(kind, 0.01))
        if kind == "ratelimited":
            return kind, JSONResponse({"error": "rate_limited", "detail": "x"}, status_code=429,
                                      headers={"Retry-After": "1"})
        if kind == "boom":
            return kind, JSONResponse({"error": "internal_error", "detail": "x"}, status_code=500)
        return kind, None

    async def query_v2(self, request: Request) -> Response:
        kind, refused = await self._admit(request)
        return refused or JSONResponse(_answer(kind))

    async def query_v2_stream(self, request: Request) -> Response:
        kind, refused = await self._admit(request)
        if refused is not None:
            return refused

        async def frames() -> AsyncIterator[str]:
            yield _frame("tool.started", {"tool": "search"})
            yield _frame("tool.finished", {"tool": "search", "status": "ok"})
            if kind == "streamfail":
                yield _frame("error", {"status": 500, "error": "internal_error", "detail": "x"})
                return
            body = _answer(kind)
            yield _frame("message.start", {"conversation_id": "c", "message_id": "m", "schema": "v2"})
            yield _frame("trace", {"trace_id": "t", "tool": "search", "tool_executed": True})
            yield _frame("citation", {"citation_key": "p1"})
            yield _frame("passage", {"citation_key": "p1", "text": "Pasal 1"})
            yield _frame("annotations", {**body["faithfulness"], "fallback_used": body["fallback_used"],
                                         "fallback_reason": body["fallback_reason"]})
            await asyncio.sleep(0.02)
            yield _frame("answer.delta", {"text": "jawa"})
            yield _frame("answer.delta", {"text": "ban"})
            if kind == "unterminated":
                return
            yield _frame("done", {"finish_reason": "stop", "history_truncated": False})
            if kind == "double":
                yield _frame("error", {"status": 500, "error": "internal_error", "detail": "x"})

        return StreamingResponse(frames(), media_type="text/event-stream")

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/query/v2", self.query_v2, methods=["POST"]),
                                 Route("/query/v2/stream", self.query_v2_stream, methods=["POST"])])


@pytest.fixture(scope="module")
def mimic() -> Iterator[tuple[str, Mimic]]:
    service = Mimic()
    with serving(service.app()) as base:
        yield base, service


def _counts(questions: list[str], n: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in range(n):
        out[questions[i % len(questions)]] = out.get(questions[i % len(questions)], 0) + 1
    return out


# ---------------------------------------------------------------------------- pure pieces


def test_poisson_arrivals_are_seeded_and_match_the_rate() -> None:
    a = poisson_arrivals(50, 20, seed=3)
    assert a == poisson_arrivals(50, 20, seed=3)
    assert a != poisson_arrivals(50, 20, seed=4)
    assert abs(len(a) - 1000) < 4 * math.sqrt(1000)  # Poisson: sd = sqrt(rate x duration)
    assert all(0 <= x < 20 for x in a) and a == sorted(a)
    gaps = [b - x for x, b in zip([0.0, *a], a)]
    assert statistics.mean(gaps) == pytest.approx(1 / 50, rel=0.1)
    assert statistics.stdev(gaps) == pytest.approx(1 / 50, rel=0.15)  # exponential: sd == mean
    assert len(poisson_arrivals(1000, 10, seed=0, max_requests=25)) == 25
    with pytest.raises(ValueError):
        poisson_arrivals(0, 1, seed=0)


def test_questions(tmp_path: Path) -> None:
    f = tmp_path / "q.jsonl"
    f.write_text('{"question": "satu"}\n\n{"query": "dua", "id": 2}\ntiga apa?\n', encoding="utf-8")
    assert load_questions(f) == ["satu", "dua", "tiga apa?"]
    f.write_text('{"id": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="neither"):
        load_questions(f)


# ---------------------------------------------------------------------------- against the mimic


def test_open_loop_json_counts_errors_verification_and_percentiles(mimic: tuple[str, Mimic]) -> None:
    url, service = mimic
    questions = ["full", "partial", "none", "fallback", "ratelimited", "boom", "full", "slow"]
    rate, duration, seed = 40.0, 1.5, 7
    n = len(poisson_arrivals(rate, duration, seed))
    want = _counts(questions, n)
    before = len(service.received)
    m = asyncio.run(run_open_loop(url, API_KEY, questions, rate=rate, duration=duration, seed=seed,
                                  token=TOKEN, slo_ms=200, timeout=5))
    assert len(service.received) - before == m.sent == n
    assert abs(n - rate * duration) < 4 * math.sqrt(rate * duration)
    assert m.errors == {"429": want["ratelimited"], "500": want["boom"]}
    assert m.completed == n - want["ratelimited"] - want["boom"] and m.failed == n - m.completed
    assert m.verification == {"full": want["full"] + want["slow"], "partial": want["partial"],
                              "none": want["none"] + want["fallback"]}
    assert m.fallback_used == want["fallback"] and m.fallback_reasons == {FALLBACK: want["fallback"]}
    assert m.p50_latency_ms is not None and m.p95_latency_ms is not None and m.p99_latency_ms is not None
    assert m.max_latency_ms is not None and m.slo_attainment is not None
    assert 10 <= m.p50_latency_ms <= m.p95_latency_ms <= m.p99_latency_ms <= m.max_latency_ms
    assert m.max_latency_ms >= 400  # the slow answers
    within = round(m.slo_attainment * m.sent)
    assert within <= m.completed - want["slow"]  # a 400 ms answer never meets a 200 ms SLO
    assert m.goodput_rps == pytest.approx(within / m.duration_s, abs=0.01)
    assert m.throughput_rps == pytest.approx(m.completed / m.duration_s, abs=0.01)
    assert m.duration_s >= poisson_arrivals(rate, duration, seed)[-1]
    assert m.streams == 0 and m.streams_all_terminal_ok is None and m.cap_waits == 0


def test_stream_first_delta_and_terminal_frames(mimic: tuple[str, Mimic]) -> None:
    url, _ = mimic
    questions = ["full", "partial", "streamfail", "none", "ratelimited", "fallback"]
    m = asyncio.run(run_closed_loop(url, API_KEY, questions, 4, 12, "/query/v2/stream"))
    assert m["sent"] == 12 and m["completed"] == 8
    assert m["errors"] == {"429": 2, "stream_error_500": 2}
    assert m["verification"] == {"full": 2, "partial": 2, "none": 4}
    assert m["fallback_used"] == 2
    assert m["streams"] == 10 and m["streams_terminal_ok"] == 10 and m["streams_all_terminal_ok"] is True
    assert 20 <= m["p50_first_delta_ms"] <= m["p95_first_delta_ms"] <= m["p99_first_delta_ms"]
    assert m["p50_first_delta_ms"] <= m["max_latency_ms"]
    assert m["extra"] == {"mode": "closed", "clients": 4, "requests": 12}

    odd = ["unterminated", "double", "full"]
    bad = asyncio.run(run_closed_loop(url, API_KEY, odd, 1, 3, "/query/v2/stream"))
    assert bad["errors"] == {"stream_extra_terminal": 1, "stream_unterminated": 1}
    assert bad["streams_terminal_ok"] == 1 and bad["streams_all_terminal_ok"] is False


def test_cap_timeout_auth_and_connection_errors(mimic: tuple[str, Mimic]) -> None:
    url, _ = mimic
    capped = asyncio.run(run_open_loop(url, API_KEY, ["medium"], rate=30, duration=0.3, seed=1,
                                       concurrency_cap=1, timeout=5))
    assert capped.sent >= 3 and capped.completed == capped.sent
    assert capped.cap_waits >= 1 and capped.p95_wait_ms is not None and capped.p95_wait_ms > 0
    hung = asyncio.run(run_closed_loop(url, API_KEY, ["hang", "full"], 2, 2, "/query/v2", timeout=0.5))
    assert hung["errors"] == {"timeout": 1} and hung["completed"] == 1
    denied = asyncio.run(run_closed_loop(url, "wrong", ["full"], 1, 2, "/query/v2"))
    assert denied["errors"] == {"401": 2}
    bad_token = asyncio.run(run_closed_loop(url, API_KEY, ["full"], 1, 1, "/query/v2", token="nope"))
    assert bad_token["errors"] == {"401": 1}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"  # bound, not listening: refused
        gone = asyncio.run(run_closed_loop(dead, API_KEY, ["full"], 1, 2, "/query/v2", timeout=2))
    assert gone["errors"] == {"connection_error": 2} and gone["p50_latency_ms"] is None
    with pytest.raises(ValueError):
        asyncio.run(run_closed_loop(url, API_KEY, ["full"], 1, 1, "/elsewhere"))
    with pytest.raises(ValueError):
        asyncio.run(run_closed_loop("ftp://127.0.0.1", API_KEY, ["full"], 1, 1, "/query/v2"))


def test_cli_prints_a_table_and_writes_json_without_secrets(mimic: tuple[str, Mimic], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = mimic
    qfile = tmp_path / "q.txt"
    qfile.write_text("full\npartial\n", encoding="utf-8")
    out = tmp_path / "res" / "load.json"
    rc = loadtest.main(["--url", url, "--api-key", API_KEY, "--token", TOKEN, "--questions", str(qfile),
                        "--rate", "20", "--duration", "0.5", "--route", "/query/v2/stream",
                        "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "throughput" in printed and "first answer.delta" in printed and "(all)" in printed
    text = out.read_text(encoding="utf-8")
    assert API_KEY not in text and TOKEN not in text
    report = json.loads(text)
    assert report["benchmark"] == "loadtest" and "--api-key '***'" in report["command"]
    m = report["metrics"]
    assert m["sent"] == len(poisson_arrivals(20, 0.5, 0)) == m["completed"] and m["errors"] == {}
    assert m["streams_all_terminal_ok"] is True and m["extra"]["mode"] == "open"


# ---------------------------------------------------------------------------- query_v2's pieces


def test_query_v2_stages_a_corpus_of_symlinks(tmp_path: Path) -> None:
    from benchmarks.query_v2 import stage_corpus, subset_files

    corpus = tmp_path / "corpus"
    for rel in ("uu/2006/11.md", "pp/2006/11.md", "pp/1961/124.md"):
        (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
        (corpus / rel).write_text(f"# {rel}\n", encoding="utf-8")
    (corpus / "PROVENANCE.md").write_text("not a statute\n", encoding="utf-8")
    (corpus / "demo_subset.txt").write_text("# comment\nuu/2006/11.md\n\npp/2006/11.md\n", encoding="utf-8")
    assert subset_files(corpus, "demo") == ["uu/2006/11.md", "pp/2006/11.md"]
    assert subset_files(corpus, "full") == ["pp/1961/124.md", "pp/2006/11.md", "uu/2006/11.md"]
    stage = stage_corpus(corpus, subset_files(corpus, "full"), tmp_path / "stage")
    assert sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*.md")) == [
        "pp/1961/124.md", "pp/2006/11.md", "uu/2006/11.md"]
    assert (stage / "pp/2006/11.md").read_text(encoding="utf-8") == "# pp/2006/11.md\n"
    stage_corpus(corpus, ["uu/2006/11.md"], stage)  # a smaller subset drops the other links
    assert [p.relative_to(stage).as_posix() for p in stage.rglob("*.md")] == ["uu/2006/11.md"]
    (corpus / "demo_subset.txt").write_text("uu/1999/1.md\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="uu/1999/1.md"):
        subset_files(corpus, "demo")


@pytest.mark.data
def test_query_v2_demo_subset_lists_53_statutes() -> None:
    from benchmarks.query_v2 import CORPUS, subset_files

    if not (CORPUS / "demo_subset.txt").is_file():
        pytest.skip(f"no corpus at {CORPUS}")
    assert len(subset_files(CORPUS, "demo")) == 53


def test_query_v2_goals_and_table() -> None:
    from benchmarks.loadtest_metrics import Outcome, summarize
    from benchmarks.query_v2 import evaluate_goals, format_rows

    def row(route: str, clients: int, latency_s: float, ok: bool = True) -> dict[str, Any]:
        outs = [Outcome(ok, 200 if ok else 500, None if ok else "500", latency_s, verification="full")] * 4
        m = summarize(outs, 1.0, route=route, slo_ms=600)
        m.extra.update(clients=clients)
        return asdict(m)

    rows = [row("/query/v2", 8, 0.2), row("/query/v2", 32, 0.9), row("/query/v2/stream", 32, 0.9, ok=False)]
    assert evaluate_goals(rows) == {"p50_le_250ms_at_8": True, "p95_le_600ms_at_8": True,
                                    "no_errors_at_32": False}
    assert evaluate_goals([row("/query/v2", 8, 0.3)])["p50_le_250ms_at_8"] is False
    assert set(evaluate_goals([]).values()) == {None}
    table = format_rows(rows)
    assert "/query/v2/stream" in table and "500:4" in table and "4/0/0" in table
