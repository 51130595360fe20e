"""/query/v2 over the in-process app with MCP servers configured under ``sources.mcp``: a statistics question
answered through a real MCP server process (stdio and streamable HTTP) cites the call's identity and is
``supported``; a failing or hanging server gives ``mcp_source_unavailable`` (within its timeout) when the
answer depended on it, and the honest note when the documents answer instead."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from retrieval.port import LocalRetrieverPort
from serve_app.agent.writers.base import Writer
from serve_app.answer.refusals import REFUSAL_TEXTS, TOOL_NOTICES
from serve_app.answer.segments import Segment
from serve_app.config import AppConfig, SourcesConfig, load_config
from serve_app.runtime import factory
from tests.conftest import API_KEY, REPO
from tests.contract.checks import assert_v2_body, parse_sse, validate_against_schema
from tests.contract.stream_checks import assert_v2_stream
from tests.support.mcp_servers import SECRET, demo_command, faulty_command, http_server
from tests.support.service import BUDGET_QUESTION, TRUE_FIGURE, ScriptedWriter, config, key_of, post

QUESTION = "Berapa jumlah penduduk Kabupaten Teluk Damai tahun 2024?"


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with http_server(demo_command()) as url:
        yield url


def mcp_config(tmp: Path, index: Path, **server: Any) -> AppConfig:
    # A loaded test host may take seconds to start a stdio server; the hanging-server test sets its own.
    entry = {"name": "demo", "allowed_tools": ["cari_statistik"], "timeout_s": 30.0, **server}
    hosts = [server["url"].split("//")[1].split("/")[0]] if "url" in server else []
    sources = SourcesConfig.model_validate({"egress_allowlist": hosts, "mcp": [entry]})
    cfg: AppConfig = config(tmp, index, sources=sources)
    return cfg


def ask(cfg: AppConfig, retriever: Any, query: str, writer: Writer | None = None) -> dict[str, Any]:
    """The answer of the in-process app the factory builds from ``cfg`` (its MCP tools included)."""
    parts = factory.Components(retriever=LocalRetrieverPort(retriever), writer=writer)
    pipeline = factory.build_pipeline(cfg, parts)
    app = factory.build_inprocess_app(cfg, retriever=retriever, pipeline=pipeline)
    with TestClient(app) as client:
        resp = post(client, "/query/v2", {"query": query, "include_provenance": True})
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    assert_v2_body(body, opt_in=("used_docs", "tool_call_audit", "model_call_log"))
    validate_against_schema(body, "query_v2_response")
    return body


def assert_answered_through_mcp(body: dict[str, Any]) -> None:
    assert body["fallback_reason"] is None and body["tool"] == "mcp:demo:cari_statistik"
    facts = [c for c in body["claims"] if c["kind"] == "fact"]
    assert facts and all(c["verdict"] == "supported" for c in facts)
    assert any("152340" in c["text"].replace(".", "") for c in facts)
    citation = facts[0]["citations"][0]["citation"]
    assert citation["source"] == "MCP demo"
    assert citation["dataset"] == "Statistik Demo Wilayah Fiktif (data fiktif)"
    assert citation["period"] == "2024"
    assert citation["call"] == f'cari_statistik(query="{QUESTION}", tahun=2024)'
    assert citation["retrieved_at"].endswith("Z")


def test_the_demo_config_answers_a_statistics_question_through_its_mcp_server(
    tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    """configs/demo_sources.yaml as shipped (its CKAN and BPS demo servers not started: they say so)."""
    env = {
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(demo_index),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp_path / 'aceh.db'}",
    }
    cfg = load_config(str(REPO / "configs" / "demo_sources.yaml"), env=env)
    body = ask(cfg, demo_retriever, QUESTION)
    assert_answered_through_mcp(body)
    statuses = {a["tool"]: a["status"] for a in body["tool_call_audit"]}
    assert statuses["mcp:demo:cari_statistik"] == "ok"


def test_a_statistics_question_is_answered_through_mcp_over_stdio(
    tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    cfg = mcp_config(tmp_path, demo_index, command=demo_command())
    assert_answered_through_mcp(ask(cfg, demo_retriever, QUESTION))


def test_a_statistics_question_is_answered_through_mcp_over_http(
    tmp_path: Path, demo_index: Path, demo_retriever: Any, demo_url: str
) -> None:
    cfg = mcp_config(tmp_path, demo_index, url=demo_url)
    assert_answered_through_mcp(ask(cfg, demo_retriever, QUESTION))


def test_the_stream_shows_the_mcp_call_and_its_record(
    tmp_path: Path, demo_index: Path, demo_retriever: Any, demo_url: str
) -> None:
    cfg = mcp_config(tmp_path, demo_index, url=demo_url)
    pipeline = factory.build_pipeline(cfg, factory.Components(retriever=LocalRetrieverPort(demo_retriever)))
    app = factory.build_inprocess_app(cfg, retriever=demo_retriever, pipeline=pipeline)
    with TestClient(app) as client:
        resp = post(client, "/query/v2/stream", {"query": QUESTION})
    assert resp.status_code == 200
    frames = parse_sse(resp.text)
    seen = assert_v2_stream(frames)
    started = [d for e, d in frames if e == "tool.started"]
    finished = [d for e, d in frames if e == "tool.finished"]
    assert started[0]["tool"] == "mcp:demo:cari_statistik" and started[0]["arguments"] == {"query": QUESTION}
    assert finished[0]["status"] == "ok" and finished[0]["result_count"] == 1
    [passage] = [d for e, d in frames if e == "passage" and d["kind"] == "tool"]
    assert "nilai: 152340 jiwa" in passage["text"]
    assert seen["terminal"][0] == "done"


def test_each_figure_is_judged_against_the_record_read(
    tmp_path: Path, demo_index: Path, demo_retriever: Any, demo_url: str
) -> None:
    """The judge sees the record with its identity: the record's figure is supported, a changed digit, the
    wrong year or the wrong region is not."""
    facts = {
        "Jumlah penduduk Kabupaten Teluk Damai tahun 2024 sebanyak 152.340 jiwa.": "supported",
        "Jumlah penduduk Kabupaten Teluk Damai tahun 2024 sebanyak 152.430 jiwa.": "unsupported",
        "Jumlah penduduk Kabupaten Teluk Damai tahun 2021 sebanyak 152.340 jiwa.": "unsupported",
        "Jumlah penduduk Kota Bukit Asri tahun 2024 sebanyak 152.340 jiwa.": "unsupported",
    }

    def script(passages: Any, _call: int, _feedback: Any) -> list[Segment]:
        key = key_of(passages, "152340")
        return [Segment(text, "fact", "paragraph", (key,)) for text in facts]

    cfg = mcp_config(tmp_path, demo_index, url=demo_url)
    body = ask(cfg, demo_retriever, QUESTION, ScriptedWriter(script))
    assert {c["text"]: c["verdict"] for c in body["claims"]} == facts


def test_a_failing_mcp_source_gives_mcp_source_unavailable(
    tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    cfg = mcp_config(tmp_path, demo_index, command=faulty_command("fail"))
    body = ask(cfg, demo_retriever, QUESTION)
    assert body["fallback_reason"] == "mcp_source_unavailable" and body["fallback_used"] is True
    assert body["answer"] == REFUSAL_TEXTS["mcp_source_unavailable"] and body["claims"] == []
    assert body["tool_call_audit"][0]["status"] == "unavailable"
    assert SECRET not in str(body)


def test_a_hanging_mcp_source_gives_mcp_source_unavailable_within_its_timeout(
    tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    timeout = 4.0
    cfg = mcp_config(tmp_path, demo_index, command=faulty_command("hang"), timeout_s=timeout)
    t0 = time.perf_counter()
    body = ask(cfg, demo_retriever, QUESTION)
    took = time.perf_counter() - t0
    assert body["fallback_reason"] == "mcp_source_unavailable"
    call = body["tool_call_audit"][0]
    assert call["status"] == "timeout" and call["duration_ms"] < (timeout + 1.0) * 1000
    assert took < timeout + 10  # the rest of the request (search, judge, app start) on a loaded host


def test_a_failing_mcp_source_is_noted_when_the_documents_answer(
    tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    cfg = mcp_config(tmp_path, demo_index, command=faulty_command("fail"))
    body = ask(cfg, demo_retriever, "Berapa statistik " + BUDGET_QUESTION[0].lower() + BUDGET_QUESTION[1:])
    assert body["fallback_reason"] is None
    assert TOOL_NOTICES["mcp_unavailable"] in body["answer"]
    assert any(TRUE_FIGURE in c["text"] and c["verdict"] == "supported" for c in body["claims"])
