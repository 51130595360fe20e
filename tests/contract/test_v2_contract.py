"""/query/v2 and /query/v2/stream over every demo question: every body and every stream keeps the contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.contract.checks import assert_v2_body, parse_sse, strip_volatile, validate_against_schema
from tests.contract.stream_checks import assert_v2_stream
from tests.support.service import BUDGET_QUESTION, TRUE_FIGURE, post

QUESTIONS = [
    json.loads(line)
    for line in (Path(__file__).resolve().parents[1] / "data" / "demo_questions.jsonl")
    .read_text("utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {q["id"]: q for q in QUESTIONS}


def _v2(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    resp = post(client, "/query/v2", body)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    data: dict[str, Any] = resp.json()
    return data


def _stream(client: TestClient, path: str, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    resp = post(client, path, body)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("text/event-stream")
    return parse_sse(resp.text)


@pytest.mark.parametrize("qid", list(BY_ID))
def test_every_demo_question_keeps_the_contract(demo_client: TestClient, qid: str) -> None:
    request = {"query": BY_ID[qid]["question"]}
    body = _v2(demo_client, request)
    assert_v2_body(body)
    validate_against_schema(body, "query_v2_response")
    again = _v2(demo_client, request)
    assert strip_volatile(again) == strip_volatile(body), "identical requests must give identical answers"
    assert again["conversation_id"] != body["conversation_id"], (
        "each request without an id is a new conversation"
    )

    frames = _stream(demo_client, "/query/v2/stream", request)
    seen = assert_v2_stream(frames, body=body)
    assert seen["terminal"] == (
        "done",
        {"finish_reason": seen["terminal"][1]["finish_reason"], "history_truncated": False},
    )
    assert seen["message_start"]["conversation_id"] not in (None, body["conversation_id"])


def test_demo_answers_publish_supported_claims(demo_client: TestClient) -> None:
    """Not a contract invariant but its purpose: most demo questions with a gold document get a supported
    claim; no claim anywhere is "supported" with an unverified reason (checked by assert_v2_body)."""
    answered = [q for q in QUESTIONS if q["gold_file"]]
    verified = sum(1 for q in answered if _v2(demo_client, {"query": q["question"]})["claims_supported"] > 0)
    assert verified >= 0.8 * len(answered), f"only {verified}/{len(answered)} answered with a supported claim"


def test_budget_question_supports_the_right_figure(demo_client: TestClient) -> None:
    body = _v2(demo_client, {"query": BUDGET_QUESTION})
    assert_v2_body(body)
    supported = [c for c in body["claims"] if c["verdict"] == "supported"]
    assert any(TRUE_FIGURE in c["text"] for c in supported), body["answer"]
    assert body["faithfulness"]["verification"] in ("full", "partial")
    assert body["fallback_used"] is False and body["tool_executed"] is True
    for claim in supported:
        assert claim["citations"] and all(p["citation"]["chunk_id"] for p in claim["citations"])
        chip_at = claim["end"]
        assert body["answer"][:chip_at].endswith(claim["text"])


def test_opt_in_fields_appear_only_when_asked(demo_client: TestClient) -> None:
    plain = _v2(demo_client, {"query": BUDGET_QUESTION})
    grounding = _v2(demo_client, {"query": BUDGET_QUESTION, "include_grounding": True})
    provenance = _v2(demo_client, {"query": BUDGET_QUESTION, "include_provenance": True})
    both = _v2(demo_client, {"query": BUDGET_QUESTION, "include_grounding": True, "include_provenance": True})
    assert_v2_body(plain)
    assert_v2_body(grounding, opt_in={"grounding"})
    assert_v2_body(provenance, opt_in={"used_docs", "tool_call_audit", "model_call_log"})
    assert_v2_body(both, opt_in={"grounding", "used_docs", "tool_call_audit", "model_call_log"})
    for body in (plain, grounding, provenance, both):
        validate_against_schema(body, "query_v2_response")
    assert len(grounding["grounding"]) == len(grounding["claims"])
    assert provenance["tool_call_audit"] and provenance["model_call_log"]
    assert len(provenance["model_call_log"]) == provenance["usage"]["model_calls"]
    # The opt-ins change nothing else in the answer.
    drop = ("grounding", "used_docs", "tool_call_audit", "model_call_log")
    assert strip_volatile({k: v for k, v in both.items() if k not in drop}) == strip_volatile(plain)


def test_opt_ins_apply_to_json_only(demo_client: TestClient) -> None:
    frames = _stream(
        demo_client,
        "/query/v2/stream",
        {"query": BUDGET_QUESTION, "include_grounding": True, "include_provenance": True},
    )
    seen = assert_v2_stream(frames)
    for key in ("grounding", "used_docs", "tool_call_audit", "model_call_log"):
        assert all(key not in data for event, data in frames if event != "annotations")
    assert isinstance(seen["annotations"]["grounding"], dict)  # the three counts, not the opt-in list


def test_stream_sends_tool_frames_then_every_verdict_before_text(demo_client: TestClient) -> None:
    frames = _stream(demo_client, "/query/v2/stream", {"query": BUDGET_QUESTION})
    seen = assert_v2_stream(frames)
    assert seen["tools"], "tool.started/tool.finished while the agent works"
    events = [e for e, _ in frames]
    assert events.index("annotations") < events.index("answer.delta")
    chunk_passages = [p for p in seen["passages"] if p["kind"] == "chunk"]
    assert chunk_passages and all(p["citation_key"] and p["chunk_id"] for p in chunk_passages)
