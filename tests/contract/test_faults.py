"""Failures of the writer, the judge and the framing check give exactly the verdicts, reasons and refusals
the contract names, and nothing unverified is ever "supported"."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from judge.llm_judge import LLMJudge
from judge.types import JudgeItem, JudgeResult
from models.base import CallRecord, ModelTimeout, ModelUnavailable
from models.tokens import estimate_message_tokens
from serve_app.agent.prompts import build_messages
from serve_app.agent.tools.base import LocalRetrieverPort
from serve_app.agent.writers.base import WriterOutput
from serve_app.answer.segments import Passage, Segment
from tests.contract.checks import (
    assert_no_internals,
    assert_v1_body,
    assert_v2_body,
    assert_v2_stream,
    parse_sse,
    validate_against_schema,
)
from tests.support.judges import Hook, ScriptedJudge
from tests.support.service import (
    ALTERED_FACT,
    BUDGET_QUESTION,
    REWRITTEN_FACT,
    SOURCE_NEEDLE,
    TRUE_FACT,
    TRUE_FIGURE,
    WRONG_SCALE_FACT,
    AppendingWriter,
    FailingFraming,
    GarbageEngine,
    ScriptedWriter,
    client_for,
    config,
    facts_citing,
    key_of,
    lead_and_facts,
    post,
)

MANY_CLAIMS = "Berapa target Pendapatan Asli Daerah Aceh tahun 2024?"  # demo-06: six supported claims


@pytest.fixture()
def env(tmp_path: Path, demo_index: Path, demo_retriever: Any) -> dict[str, Any]:
    return {"tmp": tmp_path, "index": demo_index, "retriever": demo_retriever}


def rules_with(hook: Hook | None = None) -> ScriptedJudge:
    """The real rule judge, with ``hook(round, items)`` able to sleep, raise or answer instead."""
    return ScriptedJudge(hook=hook, default="rules")


def _answer(
    env: dict[str, Any],
    *,
    query: str = BUDGET_QUESTION,
    cfg_updates: dict[str, Any] | None = None,
    path: str = "/query/v2",
    **fakes: Any,
) -> dict[str, Any]:
    cfg = config(env["tmp"], env["index"], **(cfg_updates or {}))
    with client_for(cfg, env["retriever"], **fakes) as client:
        resp = post(client, path, {"query": query})
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    if path == "/query/v2":
        assert_v2_body(body)
        validate_against_schema(body, "query_v2_response")
    return body


def _marks(body: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(c["verdict"], c["unverified_reason"]) for c in body["claims"]]


def _by_text(body: dict[str, Any], text: str) -> dict[str, Any]:
    return next(c for c in body["claims"] if c["text"] == text)


# ---------------------------------------------------------------------------- judge failures


def test_judge_down_makes_every_cited_claim_unverified(env: dict[str, Any]) -> None:
    def down(_call: int, _items: list[JudgeItem]) -> None:
        raise ConnectionError("judge at http://10.0.0.9:9000 refused: secret-token")

    body = _answer(env, query=MANY_CLAIMS, judge=rules_with(down))
    assert body["claims"] and set(_marks(body)) == {("unverified", "judge_unavailable")}
    faith = body["faithfulness"]
    assert faith["judge_status"] == "unavailable" and faith["verification"] == "none"
    assert faith["unverified_reasons"]["judge_unavailable"] == len(body["claims"])
    assert body["claims_supported"] == 0 and body["grounding_rate"] == 0.0 and body["fallback_used"] is False
    assert_no_internals(str(body))


def test_judge_function_raising_is_judge_unavailable_too(env: dict[str, Any]) -> None:
    from serve_app.answer.annotate import Annotator
    from serve_app.answer.framing import EmbeddedFramingChecker
    from serve_app.runtime import factory

    async def broken(items: list[JudgeItem]) -> list[JudgeResult]:
        raise RuntimeError("pool gone")

    cfg = config(env["tmp"], env["index"])
    pipeline = factory.build_inprocess(cfg, retriever=env["retriever"])
    pipeline.annotator = Annotator(broken, EmbeddedFramingChecker())
    from starlette.testclient import TestClient

    with TestClient(
        factory.build_inprocess_app(cfg, retriever=env["retriever"], pipeline=pipeline)
    ) as client:
        body = post(client, "/query/v2", {"query": BUDGET_QUESTION}).json()
    assert_v2_body(body)
    assert set(_marks(body)) == {("unverified", "judge_unavailable")}


def test_slow_judge_past_the_deadline_is_unverified_deadline(env: dict[str, Any]) -> None:
    async def slow(_call: int, _items: list[JudgeItem]) -> None:
        await asyncio.sleep(30)

    started = time.perf_counter()
    body = _answer(
        env, query=MANY_CLAIMS, cfg_updates={"budgets": {"deadline_s": 2.0}}, judge=rules_with(slow)
    )
    assert time.perf_counter() - started < 6, "the request must end at its deadline, not the judge's"
    assert body["claims"] and set(_marks(body)) == {("unverified", "deadline")}
    assert body["faithfulness"]["unverified_reasons"]["deadline"] == len(body["claims"])
    assert body["faithfulness"]["verification"] == "none"


def test_a_batch_back_before_the_deadline_keeps_its_verdicts(env: dict[str, Any]) -> None:
    """First pass returns in time; the re-check of the altered figure runs past the deadline."""

    async def late_recheck(round_: int, _items: list[JudgeItem]) -> None:
        if round_ >= 2:
            await asyncio.sleep(30)

    body = _answer(
        env,
        cfg_updates={"budgets": {"deadline_s": 2.0}},
        judge=rules_with(late_recheck),
        writer=AppendingWriter(facts_citing(ALTERED_FACT)),
    )
    altered = _by_text(body, ALTERED_FACT)
    assert (altered["verdict"], altered["unverified_reason"]) == ("unverified", "deadline")
    others = [c for c in body["claims"] if c is not altered]
    assert others and all(c["verdict"] == "supported" for c in others)
    assert body["faithfulness"]["verification"] == "partial"
    assert body["faithfulness"]["judge_status"] == "unavailable"


def test_budget_with_no_call_for_the_agent_refuses(env: dict[str, Any]) -> None:
    body = _answer(env, cfg_updates={"budgets": {"model_calls": 1}})
    assert body["fallback_used"] is True and body["fallback_reason"] == "query_budget_exhausted"
    assert body["claims"] == [] and body["grounding_rate"] is None


def test_budget_exhausted_before_every_claim_is_judged(env: dict[str, Any]) -> None:
    # One call for the (embedded) agent leaves one for the judge: every claim after the first is over budget.
    body = _answer(env, query=MANY_CLAIMS, cfg_updates={"budgets": {"model_calls": 2}})
    marks = _marks(body)
    assert len(marks) >= 2, marks
    assert ("unverified", "budget") in marks, marks
    assert set(marks) <= {("supported", None), ("unverified", "budget")}
    assert body["usage"]["model_calls"] <= 2
    assert body["faithfulness"]["unverified_reasons"]["budget"] == marks.count(("unverified", "budget"))


def test_unparseable_judge_results_are_unverified_unparseable(env: dict[str, Any]) -> None:
    def nonsense(_call: int, items: list[JudgeItem]) -> list[JudgeResult]:
        return [JudgeResult(i.item_id, "mungkin") for i in items]  # type: ignore[arg-type]

    body = _answer(env, judge=rules_with(nonsense))
    assert set(_marks(body)) == {("unverified", "unparseable")}


@pytest.mark.parametrize("mode", ["json", "labels"])
def test_llm_judge_with_garbage_output_is_unparseable(env: dict[str, Any], mode: str) -> None:
    body = _answer(env, judge=LLMJudge(GarbageEngine(), mode=mode))  # type: ignore[arg-type]
    assert body["claims"] and set(_marks(body)) == {("unverified", "unparseable")}
    assert body["faithfulness"]["verification"] == "none"


# ---------------------------------------------------------------------------- re-check


def test_altered_figure_is_unsupported_after_the_recheck_confirms(env: dict[str, Any]) -> None:
    judge = rules_with()
    body = _answer(env, writer=AppendingWriter(facts_citing(ALTERED_FACT, WRONG_SCALE_FACT)), judge=judge)
    for text in (ALTERED_FACT, WRONG_SCALE_FACT):
        claim = _by_text(body, text)
        assert (claim["verdict"], claim["unverified_reason"]) == ("unsupported", None), text
        assert claim["citation_keys"] and claim["invalid_citation_keys"] == []
    assert sorted(judge.seen.values()) == [1, 2, 2], "each unsupported segment is judged again, alone"
    assert body["faithfulness"]["verification"] == "partial"
    assert body["faithfulness"]["unsupported"] == 2 and body["faithfulness"]["judge_status"] == "complete"


def test_same_value_written_differently_is_supported(env: dict[str, Any]) -> None:
    body = _answer(env, writer=ScriptedWriter(lead_and_facts(TRUE_FACT)))
    assert _by_text(body, TRUE_FACT)["verdict"] == "supported"
    body = _answer(env, writer=ScriptedWriter(lead_and_facts(REWRITTEN_FACT)))
    assert _by_text(body, REWRITTEN_FACT)["verdict"] == "supported", body["claims"]


def test_recheck_failing_gives_its_own_reason(env: dict[str, Any]) -> None:
    def recheck_down(round_: int, _items: list[JudgeItem]) -> None:
        if round_ >= 2:
            raise ConnectionError("judge replica died")

    body = _answer(env, writer=AppendingWriter(facts_citing(ALTERED_FACT)), judge=rules_with(recheck_down))
    claim = _by_text(body, ALTERED_FACT)
    assert (claim["verdict"], claim["unverified_reason"]) == ("unverified", "judge_unavailable")


def test_recheck_disputing_makes_it_unverified_disputed(env: dict[str, Any]) -> None:
    def dispute(round_: int, items: list[JudgeItem]) -> list[JudgeResult] | None:
        return [JudgeResult(i.item_id, "supported") for i in items] if round_ >= 2 else None

    body = _answer(env, writer=AppendingWriter(facts_citing(ALTERED_FACT)), judge=rules_with(dispute))
    claim = _by_text(body, ALTERED_FACT)
    assert (claim["verdict"], claim["unverified_reason"]) == ("unverified", "disputed")
    assert body["faithfulness"]["unverified_reasons"]["disputed"] == 1


# ---------------------------------------------------------------------------- framing check


def test_framing_check_failing_marks_every_framing_uncited(env: dict[str, Any]) -> None:
    framing = FailingFraming()
    body = _answer(env, framing=framing, writer=ScriptedWriter(lead_and_facts(TRUE_FACT)))
    assert framing.calls == 1, "one framing call per answer"
    faith = body["faithfulness"]
    assert faith["framing_check"] == "unavailable" and body["framing"] == [] and faith["framing_total"] == 0
    lead = body["claims"][0]
    assert (lead["kind"], lead["verdict"], lead["citation_keys"]) == ("framing", "uncited", [])
    assert _by_text(body, TRUE_FACT)["verdict"] == "supported"
    assert faith["verification"] == "partial" and body["claims_total"] == 2 and body["grounding_rate"] == 0.5
    assert_no_internals(str(body))


def test_framing_that_cites_a_passage_is_judged_as_a_fact(env: dict[str, Any]) -> None:
    def script(passages: Sequence[Passage], _call: int, _fb: Any) -> list[Segment]:
        key = key_of(passages, SOURCE_NEEDLE)
        return [
            Segment(TRUE_FACT, "framing", "paragraph", (key,)),
            Segment(ALTERED_FACT, "framing", "continue", (key,)),
        ]

    body = _answer(env, writer=ScriptedWriter(script))
    assert [(c["kind"], c["verdict"]) for c in body["claims"]] == [
        ("framing", "supported"),
        ("framing", "unsupported"),
    ]
    assert body["framing"] == []


def test_uncited_and_invalid_citations(env: dict[str, Any]) -> None:
    def script(passages: Sequence[Passage], _call: int, _fb: Any) -> list[Segment]:
        key = key_of(passages, SOURCE_NEEDLE)
        return [
            Segment(TRUE_FACT, "fact", "paragraph", (key, "P99")),
            Segment("Anggaran itu naik tiga kali lipat.", "fact", "continue"),
            Segment("Dana itu juga dipakai untuk beasiswa.", "fact", "continue", ("P77",)),
        ]

    body = _answer(env, writer=ScriptedWriter(script))
    judged, uncited, invalid = body["claims"]
    assert (judged["verdict"], judged["invalid_citation_keys"]) == ("supported", ["P99"])
    assert [p["citation_key"] for p in judged["citations"]] == [
        k for k in judged["citation_keys"] if k != "P99"
    ]
    assert uncited["verdict"] == "uncited" and invalid["verdict"] == "invalid_citation"
    assert invalid["invalid_citation_keys"] == ["P77"] and invalid["citations"] == []
    assert "P77" not in {c["citation_key"] for c in body["citations"]}
    assert body["claims_total"] == 3 and body["claims_supported"] == 1


# ---------------------------------------------------------------------------- writer failures


def _invalid(passages: Sequence[Passage], _call: int, _feedback: Any) -> list[Segment]:
    return [Segment("Berikut [P1] datanya.", "framing", "bullet")]


def test_agent_output_invalid_twice_is_unparseable_completion(env: dict[str, Any]) -> None:
    writer = ScriptedWriter(_invalid)
    body = _answer(env, writer=writer)
    assert body["fallback_reason"] == "unparseable_completion" and body["fallback_used"] is True
    assert "[P1]" not in body["answer"] and "bullet" not in body["answer"]
    assert len(writer.calls) == 2 and writer.calls[1]["feedback"], "one regeneration with the problems listed"


def test_agent_output_unreadable_twice_is_unparseable_completion(env: dict[str, Any]) -> None:
    writer = ScriptedWriter(
        lambda *_: WriterOutput(None, CallRecord("agent", "fake", "x"), ["not JSON"], raw="{oops")
    )
    body = _answer(env, writer=writer)
    assert body["fallback_reason"] == "unparseable_completion" and "oops" not in body["answer"]


def test_agent_output_fixed_on_regeneration_is_published(env: dict[str, Any]) -> None:
    good = lead_and_facts(TRUE_FACT)
    writer = ScriptedWriter(lambda p, call, fb: _invalid(p, call, fb) if call == 1 else good(p, call, fb))
    body = _answer(env, writer=writer)
    assert body["fallback_used"] is False and _by_text(body, TRUE_FACT)["verdict"] == "supported"


def test_writer_timeout_is_model_timeout(env: dict[str, Any]) -> None:
    writer = ScriptedWriter(
        lambda *_: ModelTimeout(
            "read timeout", record=CallRecord("agent", "fake", "x", ok=False, error="timeout")
        )
    )
    body = _answer(env, writer=writer)
    assert body["fallback_reason"] == "model_timeout" and body["claims"] == []
    v1 = _answer(env, writer=writer, path="/query")
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
    messages = build_messages(query=BUDGET_QUESTION, passages=[], history=[], editorial_prompt=None)
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


def test_checked_is_absent_on_every_other_answer(env: dict[str, Any]) -> None:
    body = _answer(env)
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
    pipeline = factory.build_inprocess(cfg, retriever=env["retriever"])
    pipeline.agent.retriever = port(env["retriever"])
    app = factory.build_inprocess_app(cfg, retriever=env["retriever"], pipeline=pipeline)
    with TestClient(app) as client:
        resp = post(client, "/query/v2", {"query": BUDGET_QUESTION})
        stream = post(client, "/query/v2/stream", {"query": BUDGET_QUESTION})
    assert resp.status_code == 404 and resp.json()["error"] == "not_found"
    assert "idx-3" not in resp.text
    frames = parse_sse(stream.text)
    assert_v2_stream(frames)
    assert frames[0][0] == "tool.started" and frames[-1][0] == "error" and frames[-1][1]["status"] == 404


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
    body = _answer(env, writer=ScriptedWriter(_every_layout))
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
