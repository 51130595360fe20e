"""/query and /query/stream (v1): the same agent and judge, but every unconfirmed sentence is removed and
the whole answer is refused when too few remain."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from serve_app.answer.segments import Passage, Segment
from tests.contract.checks import (
    assert_no_internals,
    assert_v1_body,
    parse_sse,
    strip_volatile,
    validate_against_schema,
)
from tests.support.service import (
    ALTERED_FACT,
    BUDGET_QUESTION,
    LEAD_IN,
    SOURCE_NEEDLE,
    TRUE_FACT,
    TRUE_FIGURE,
    WRONG_SCALE_FACT,
    AppendingWriter,
    ScriptedWriter,
    client_for,
    config,
    facts_citing,
    key_of,
    post,
)


@pytest.fixture()
def altered_client(tmp_path: Path, demo_index: Path, demo_retriever: Any) -> Any:
    """The embedded writer's answer plus one sentence with an altered figure citing the real passage."""
    cfg = config(tmp_path, demo_index)
    with client_for(cfg, demo_retriever, writer=AppendingWriter(facts_citing(ALTERED_FACT))) as client:
        yield client


def _v1(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    resp = post(client, "/query", body)
    assert resp.status_code == 200, resp.text
    data: dict[str, Any] = resp.json()
    assert_v1_body(data)
    validate_against_schema(data, "query_v1_response")
    return data


def test_unsupported_sentence_is_removed_and_counted(altered_client: TestClient) -> None:
    v1 = _v1(altered_client, {"query": BUDGET_QUESTION})
    v2 = post(altered_client, "/query/v2", {"query": BUDGET_QUESTION}).json()
    assert any(c["text"] == ALTERED_FACT and c["verdict"] == "unsupported" for c in v2["claims"])
    assert ALTERED_FACT in v2["answer"], "v2 marks, never removes"
    assert ALTERED_FACT not in v1["answer"] and "219.295" not in v1["answer"], (
        "v1 removes what is not supported"
    )
    assert TRUE_FIGURE in v1["answer"]
    assert v1["fallback_used"] is False
    assert v1["dropped_claims_count"] == 1 and v1["dropped_claim_reasons"] == {"unsupported": 1}
    assert [e["text"] for e in v1["claim_map"]] == [
        c["text"] for c in v2["claims"] if c["verdict"] == "supported"
    ]
    # v1 keeps the v2 figures (claims counted before removal) so one badge reads the same on both routes.
    assert (v1["claims_supported"], v1["claims_total"], v1["grounding_rate"]) == (
        v2["claims_supported"],
        v2["claims_total"],
        v2["grounding_rate"],
    )
    assert v1["provenance_complete"] is True
    for entry in v1["claim_map"]:
        assert v1["answer"][entry["start"] : entry["end"]] == entry["text"]
        assert entry["citations"] and entry["citations"][0]["citation"]["chunk_id"]
    assert {c["citation_key"] for c in v1["citations"]} == {
        k for e in v1["claim_map"] for k in e["citation_keys"]
    }


def test_v1_stream_faithfulness_frame_counts_removed_sentences(altered_client: TestClient) -> None:
    v1 = _v1(altered_client, {"query": BUDGET_QUESTION})
    resp = post(altered_client, "/query/stream", {"query": BUDGET_QUESTION})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
    frames = parse_sse(resp.text)
    for event, data in frames:
        validate_against_schema(data, f"event.{event}")
    events = [e for e, _ in frames]
    assert "annotations" not in events, "the v2 annotations frame on a v1 stream"
    assert events[-1] == "done" and events.count("done") == 1
    assert events.index("faithfulness") < events.index("answer.delta")
    faithfulness = dict(frames[events.index("faithfulness")][1])
    assert faithfulness["removed"] == v1["dropped_claims_count"] == 1
    assert faithfulness["kept"] == len(v1["claim_map"])
    assert faithfulness["dropped_claim_reasons"] == {"unsupported": 1}
    assert "".join(d["text"] for e, d in frames if e == "answer.delta") == v1["answer"]
    start = frames[events.index("message.start")][1]
    assert start.get("schema") != "annotate-v2", "a v1 stream does not announce the v2 contract"


def _one_true_two_altered(passages: Sequence[Passage], _call: int, _feedback: Any) -> list[Segment]:
    key = key_of(passages, SOURCE_NEEDLE)
    return [
        Segment(LEAD_IN, "framing", "paragraph"),
        Segment(TRUE_FACT, "fact", "paragraph", (key,)),
        Segment(ALTERED_FACT, "fact", "continue", (key,)),
        Segment(WRONG_SCALE_FACT, "fact", "continue", (key,)),
    ]


def test_refused_when_too_few_sentences_remain(tmp_path: Path, demo_index: Path, demo_retriever: Any) -> None:
    cfg = config(tmp_path, demo_index)
    with client_for(cfg, demo_retriever, writer=ScriptedWriter(_one_true_two_altered)) as client:
        v1 = _v1(client, {"query": BUDGET_QUESTION})
        v2 = post(client, "/query/v2", {"query": BUDGET_QUESTION}).json()
        stream = parse_sse(post(client, "/query/stream", {"query": BUDGET_QUESTION}).text)
    assert v2["claims_supported"] == 1 and v2["claims_total"] == 3
    assert v1["fallback_used"] is True and v1["fallback_reason"] is not None
    assert v1["claim_map"] == [] and v1["citations"] == []
    for text in (TRUE_FACT, ALTERED_FACT, WRONG_SCALE_FACT, "219.295"):
        assert text not in v1["answer"], "a refused v1 answer publishes none of its sentences"
    assert v1["dropped_claims_count"] >= 2
    assert (v1["claims_supported"], v1["claims_total"]) == (1, 3)
    assert_no_internals(v1["answer"])
    events = [e for e, _ in stream]
    assert events[-1] == "done" and "faithfulness" in events
    assert "".join(d["text"] for e, d in stream if e == "answer.delta") == v1["answer"]


def test_all_supported_answer_is_kept_whole(demo_client: TestClient) -> None:
    v1 = _v1(demo_client, {"query": BUDGET_QUESTION})
    v2 = post(demo_client, "/query/v2", {"query": BUDGET_QUESTION}).json()
    assert v2["faithfulness"]["verification"] == "full"
    assert (
        v1["answer"] == v2["answer"] and v1["dropped_claims_count"] == 0 and v1["dropped_claim_reasons"] == {}
    )
    assert len(v1["claim_map"]) == len(v2["claims"])
    assert strip_volatile(v1["citations"]) == strip_volatile(v2["citations"])


def test_v1_opt_in_fields_only_when_asked(demo_client: TestClient) -> None:
    plain = _v1(demo_client, {"query": BUDGET_QUESTION})
    asked = _v1(
        demo_client, {"query": BUDGET_QUESTION, "include_grounding": True, "include_provenance": True}
    )
    for key in ("grounding", "used_docs", "tool_call_audit", "model_call_log"):
        assert key not in plain and isinstance(asked[key], list)
