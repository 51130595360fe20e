"""Failures of the writer, an exhausted context, nothing readable, the answer-side guard and every layout:
exactly the refusals and offsets the contract names (the judge's and framing check's failures are in
test_faults.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from models.base import CallRecord, ModelTimeout, ModelUnavailable
from models.tokens import estimate_message_tokens
from retrieval.port import LocalRetrieverPort
from serve_app import errors
from serve_app.agent.prompts import build_messages
from serve_app.agent.writers.base import WriteRequest, WriterOutput
from serve_app.answer.segments import Passage, Segment
from tests.contract.checks import (
    assert_no_internals,
    assert_v1_body,
    assert_v2_body,
    parse_sse,
    validate_against_schema,
)
from tests.contract.faults import answer_body, claim_by_text
from tests.contract.stream_checks import assert_v2_stream
from tests.support.service import (
    ALTERED_FACT,
    BUDGET_QUESTION,
    SOURCE_NEEDLE,
    TRUE_FACT,
    TRUE_FIGURE,
    ScriptedWriter,
    client_for,
    config,
    key_of,
    lead_and_facts,
    post,
)

# ---------------------------------------------------------------------------- writer failures


def _invalid(passages: Sequence[Passage], _call: int, _feedback: Any) -> list[Segment]:
    return [Segment("Berikut [P1] datanya.", "framing", "bullet")]


def test_agent_output_invalid_twice_is_unparseable_completion(env: dict[str, Any]) -> None:
    writer = ScriptedWriter(_invalid)
    body = answer_body(env, writer=writer)
    assert body["fallback_reason"] == "unparseable_completion" and body["fallback_used"] is True
    assert "[P1]" not in body["answer"] and "bullet" not in body["answer"]
    assert len(writer.calls) == 2 and writer.calls[1]["feedback"], "one regeneration with the problems listed"


def test_agent_output_unreadable_twice_is_unparseable_completion(env: dict[str, Any]) -> None:
    writer = ScriptedWriter(
        lambda *_: WriterOutput(None, CallRecord("agent", "fake", "x"), ["not JSON"], raw="{oops")
    )
    body = answer_body(env, writer=writer)
    assert body["fallback_reason"] == "unparseable_completion" and "oops" not in body["answer"]


def test_agent_output_fixed_on_regeneration_is_published(env: dict[str, Any]) -> None:
    good = lead_and_facts(TRUE_FACT)
    writer = ScriptedWriter(lambda p, call, fb: _invalid(p, call, fb) if call == 1 else good(p, call, fb))
    body = answer_body(env, writer=writer)
    assert body["fallback_used"] is False and claim_by_text(body, TRUE_FACT)["verdict"] == "supported"


def test_writer_timeout_is_model_timeout(env: dict[str, Any]) -> None:
    writer = ScriptedWriter(
        lambda *_: ModelTimeout(
            "read timeout", record=CallRecord("agent", "fake", "x", ok=False, error="timeout")
        )
    )
    body = answer_body(env, writer=writer)
    assert body["fallback_reason"] == "model_timeout" and body["claims"] == []
    v1 = answer_body(env, writer=writer, path="/query")
    assert_v1_body(v1)
    assert v1["fallback_reason"] == "model_timeout"


SERVER_TEXT = "upstream 500: CUDA out of memory at http://10.1.2.3:8000 token=sk-rahasia"


@pytest.mark.parametrize("path", ["/query/v2", "/query"])
def test_writer_model_failure_is_502_with_fixed_text(env: dict[str, Any], path: str) -> None:
    writer = ScriptedWriter(
        lambda *_: ModelUnavailable(
            SERVER_TEXT, record=CallRecord("agent", "fake", "x", ok=False, error="unavailable")
        )
    )
    cfg = config(env["tmp"], env["index"])
    with client_for(cfg, env["retriever"], writer=writer) as client:
        resp = post(client, path, {"query": BUDGET_QUESTION})
        assert resp.status_code == 502
        assert resp.json()["error"] == "model_failure"
        assert "10.1.2.3" not in resp.text and "CUDA" not in resp.text and "rahasia" not in resp.text
        assert_no_internals(resp.text)
        stream = post(client, path + "/stream", {"query": BUDGET_QUESTION})
    # Tools ran first, so the stream had begun: it ends with one error frame carrying 502 and fixed text.
    assert stream.status_code == 200
    frames = parse_sse(stream.text)
    assert frames[0][0] == "tool.started" and frames[-1][0] == "error"
    assert frames[-1][1]["status"] == 502 and frames[-1][1]["detail"] == resp.json()["detail"]
    assert "10.1.2.3" not in stream.text and "CUDA" not in stream.text
    if path == "/query/v2":
        assert_v2_stream(frames)


# ---------------------------------------------------------------------------- context budget


def _context_tokens_leaving(room: int) -> int:
    messages = build_messages(WriteRequest(BUDGET_QUESTION))
    return estimate_message_tokens(messages) + 1024 + room


@pytest.mark.parametrize(("room", "tools_ran"), [(-50, False), (3, True)])
def test_context_budget_exhausted_v2_200_unchecked_v1_413(
    env: dict[str, Any], room: int, tools_ran: bool
) -> None:
    cfg = config(env["tmp"], env["index"], budgets={"context_tokens": _context_tokens_leaving(room)})
    with client_for(cfg, env["retriever"]) as client:
        v2 = post(client, "/query/v2", {"query": BUDGET_QUESTION})
        v2_stream = post(client, "/query/v2/stream", {"query": BUDGET_QUESTION})
        v1 = post(client, "/query", {"query": BUDGET_QUESTION})
        v1_stream = post(client, "/query/stream", {"query": BUDGET_QUESTION})
    assert v2.status_code == 200
    body = v2.json()
    assert_v2_body(body)
    validate_against_schema(body, "query_v2_response")
    assert body["fallback_reason"] == "context_budget_exhausted" and body["faithfulness"]["checked"] is False
    assert body["tool_executed"] is tools_ran and body["claims"] == []
    seen = assert_v2_stream(parse_sse(v2_stream.text), body=body)
    assert seen["annotations"]["checked"] is False
    assert v1.status_code == 413 and v1.json()["error"] == "context_budget_exhausted"
    assert_no_internals(v1.text)
    if tools_ran:  # the v1 stream had begun with tool frames: one error frame with the same status
        frames = parse_sse(v1_stream.text)
        assert frames[0][0] == "tool.started" and frames[-1] == ("error", {**v1.json(), "status": 413})
    else:
        assert v1_stream.status_code == 413 and v1_stream.json() == v1.json()


def test_checked_is_absent_on_every_otheranswer_body(env: dict[str, Any]) -> None:
    body = answer_body(env)
    assert "checked" not in body["faithfulness"]


# ---------------------------------------------------------------------------- nothing readable


class _EmptySearch(LocalRetrieverPort):
    async def search(self, query: str, **_: Any) -> list[Any]:
        return []


class _FailingSearch(LocalRetrieverPort):
    async def search(self, query: str, **_: Any) -> list[Any]:
        raise OSError("index shard /var/lib/aceh/idx-3 unreadable")


@pytest.mark.parametrize("port", [_EmptySearch, _FailingSearch])
def test_nothing_readable_after_tools_is_404(env: dict[str, Any], port: type[LocalRetrieverPort]) -> None:
    from starlette.testclient import TestClient

    from serve_app.runtime import factory

    cfg = config(env["tmp"], env["index"])
    # Scope needs no retriever here (no selection): only the agent's tools meet the failing one.
    pipeline = factory.build_pipeline(cfg, factory.Components(retriever=port(env["retriever"])))
    app = factory.build_inprocess_app(cfg, retriever=env["retriever"], pipeline=pipeline)
    with TestClient(app) as client:
        resp = post(client, "/query/v2", {"query": BUDGET_QUESTION})
        stream = post(client, "/query/v2/stream", {"query": BUDGET_QUESTION})
    assert resp.status_code == 404 and resp.json()["error"] == "not_found"
    assert "idx-3" not in resp.text
    frames = parse_sse(stream.text)
    assert_v2_stream(frames)
    assert frames[0][0] == "tool.started" and frames[-1][0] == "error" and frames[-1][1]["status"] == 404


class _RetrieverGone(LocalRetrieverPort):
    """What the Agent replica's handle to a Retriever replica that died raises (runtime/ports.py)."""

    async def search(self, query: str, **_: Any) -> list[Any]:
        raise errors.NotReady()



def test_a_retriever_gone_under_the_tools_is_503_not_nothing_readable(env: dict[str, Any]) -> None:
    from starlette.testclient import TestClient

    from serve_app.runtime import factory

    cfg = config(env["tmp"], env["index"])
    pipeline = factory.build_pipeline(cfg, factory.Components(retriever=_RetrieverGone(env["retriever"])))
    app = factory.build_inprocess_app(cfg, retriever=env["retriever"], pipeline=pipeline)
    body = {"query": BUDGET_QUESTION}
    with TestClient(app) as client:
        resp = post(client, "/query/v2", body)
        stream = post(client, "/query/v2/stream", body)
    assert resp.status_code == 503 and resp.json() == errors.NotReady().body()
    frames = parse_sse(stream.text)
    assert_v2_stream(frames)
    assert [f[0] for f in frames[:2]] == ["tool.started", "tool.finished"]
    assert frames[-1] == ("error", {**errors.NotReady().body(), "status": 503})


# ---------------------------------------------------------------------------- answer-side Policy Guard


def _with_a_link(passages: Sequence[Passage], _call: int, _feedback: Any) -> list[Segment]:
    key = key_of(passages, SOURCE_NEEDLE)
    return [
        Segment(TRUE_FACT, "fact", "paragraph", (key,)),
        Segment("Unduh rinciannya di www.malapp.xyz sekarang.", "fact", "continue", (key,)),
    ]


def test_answer_blocked_by_the_guard_keeps_counts_but_publishes_no_claim(env: dict[str, Any]) -> None:
    cfg = config(env["tmp"], env["index"])
    with client_for(cfg, env["retriever"], writer=ScriptedWriter(_with_a_link)) as client:
        body = post(client, "/query/v2", {"query": BUDGET_QUESTION}).json()
        frames = parse_sse(post(client, "/query/v2/stream", {"query": BUDGET_QUESTION}).text)
        v1 = post(client, "/query", {"query": BUDGET_QUESTION}).json()
    assert_v2_body(body)
    validate_against_schema(body, "query_v2_response")
    assert body["fallback_reason"] == "policy_blocked" and body["tool_executed"] is True
    assert body["claims"] == [] and body["framing"] == [] and body["citations"] == []
    assert "malapp" not in body["answer"] and TRUE_FIGURE not in body["answer"]
    faith = body["faithfulness"]
    assert (faith["supported"], faith["unsupported"], faith["claims_total"]) == (1, 1, 2)
    assert body["grounding_rate"] == 0.5 and faith["verification"] == "none"
    seen = assert_v2_stream(frames, body=body)
    assert seen["passages"] == [] and "guard.blocked" in [e for e, _ in frames]
    assert "malapp" not in json.dumps(frames)
    # v1 removed the unsupported sentence before the guard read the answer: nothing left to block.
    assert "malapp" not in v1["answer"] and v1["dropped_claims_count"] == 1
    assert_v1_body(v1)


# ---------------------------------------------------------------------------- every layout, astral text


def _every_layout(passages: Sequence[Passage], _call: int, _feedback: Any) -> list[Segment]:
    key = key_of(passages, SOURCE_NEEDLE)
    return [
        Segment("Anggaran 📊 pendidikan", "framing", "heading"),
        Segment("Halo 👋 berikut datanya:", "framing", "paragraph"),
        Segment(TRUE_FACT, "fact", "list_item", (key,)),
        Segment(ALTERED_FACT, "fact", "continue", (key,)),
        Segment("Urusan | Belanja 𝟐𝟎𝟐𝟑", "framing", "table_header"),
        Segment("Pendidikan | Rp871.667.219.294", "fact", "table_row", (key,)),
    ]


def test_every_layout_and_astral_characters_keep_exact_offsets(env: dict[str, Any]) -> None:
    body = answer_body(env, writer=ScriptedWriter(_every_layout))
    answer = body["answer"]
    assert answer.startswith("## Anggaran 📊 pendidikan\n\n") and "\n| --- | --- |\n" in answer
    assert "- " + TRUE_FACT + " " + ALTERED_FACT in answer
    spans = sorted(body["claims"] + body["framing"], key=lambda s: s["start"])
    assert [s["layout"] for s in spans] == [
        "heading",
        "paragraph",
        "list_item",
        "continue",
        "table_header",
        "table_row",
    ]
    row = spans[-1]
    assert row["end_utf16"] - row["end"] == 6, "two astral emoji and four astral digits before the row end"
    assert answer.encode("utf-16-le")[2 * row["start_utf16"] : 2 * row["end_utf16"]].decode("utf-16-le") == (
        "Pendidikan | Rp871.667.219.294"
    )
    assert body["faithfulness"]["unlocated_total"] == 0
