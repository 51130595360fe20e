"""Failures of the writer, the judge and the framing check give exactly the verdicts, reasons and refusals
the contract names, and nothing unverified is ever "supported"."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest

from judge.llm_judge import LLMJudge
from judge.types import JudgeItem, JudgeResult
from retrieval.port import LocalRetrieverPort
from serve_app.answer.segments import Passage, Segment
from tests.contract.checks import (
    assert_no_internals,
    assert_v2_body,
)
from tests.contract.faults import MANY_CLAIMS, answer_body, claim_by_text, marks, rules_with
from tests.support.service import (
    ALTERED_FACT,
    BUDGET_QUESTION,
    REWRITTEN_FACT,
    SOURCE_NEEDLE,
    TRUE_FACT,
    WRONG_SCALE_FACT,
    AppendingWriter,
    FailingFraming,
    GarbageEngine,
    ScriptedWriter,
    config,
    facts_citing,
    key_of,
    lead_and_facts,
    post,
)

# ---------------------------------------------------------------------------- judge failures


def test_judge_down_makes_every_cited_claim_unverified(env: dict[str, Any]) -> None:
    def down(_call: int, _items: list[JudgeItem]) -> None:
        raise ConnectionError("judge at http://10.0.0.9:9000 refused: secret-token")

    body = answer_body(env, query=MANY_CLAIMS, judge=rules_with(down))
    assert body["claims"] and set(marks(body)) == {("unverified", "judge_unavailable")}
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
    parts = factory.Components(
        retriever=LocalRetrieverPort(env["retriever"]), annotator=Annotator(broken, EmbeddedFramingChecker())
    )
    pipeline = factory.build_pipeline(cfg, parts)
    from starlette.testclient import TestClient

    with TestClient(
        factory.build_inprocess_app(cfg, retriever=env["retriever"], pipeline=pipeline)
    ) as client:
        body = post(client, "/query/v2", {"query": BUDGET_QUESTION}).json()
    assert_v2_body(body)
    assert set(marks(body)) == {("unverified", "judge_unavailable")}


def test_slow_judge_past_the_deadline_is_unverified_deadline(env: dict[str, Any]) -> None:
    async def slow(_call: int, _items: list[JudgeItem]) -> None:
        await asyncio.sleep(30)

    started = time.perf_counter()
    body = answer_body(
        env, query=MANY_CLAIMS, cfg_updates={"budgets": {"deadline_s": 2.0}}, judge=rules_with(slow)
    )
    assert time.perf_counter() - started < 6, "the request must end at its deadline, not the judge's"
    assert body["claims"] and set(marks(body)) == {("unverified", "deadline")}
    assert body["faithfulness"]["unverified_reasons"]["deadline"] == len(body["claims"])
    assert body["faithfulness"]["verification"] == "none"


def test_a_batch_back_before_the_deadline_keeps_its_verdicts(env: dict[str, Any]) -> None:
    """First pass returns in time; the re-check of the altered figure runs past the deadline."""

    async def late_recheck(round_: int, _items: list[JudgeItem]) -> None:
        if round_ >= 2:
            await asyncio.sleep(30)

    body = answer_body(
        env,
        cfg_updates={"budgets": {"deadline_s": 2.0}},
        judge=rules_with(late_recheck),
        writer=AppendingWriter(facts_citing(ALTERED_FACT)),
    )
    altered = claim_by_text(body, ALTERED_FACT)
    assert (altered["verdict"], altered["unverified_reason"]) == ("unverified", "deadline")
    others = [c for c in body["claims"] if c is not altered]
    assert others and all(c["verdict"] == "supported" for c in others)
    assert body["faithfulness"]["verification"] == "partial"
    assert body["faithfulness"]["judge_status"] == "unavailable"


def test_budget_with_no_call_for_the_agent_refuses(env: dict[str, Any]) -> None:
    body = answer_body(env, cfg_updates={"budgets": {"model_calls": 1}})
    assert body["fallback_used"] is True and body["fallback_reason"] == "query_budget_exhausted"
    assert body["claims"] == [] and body["grounding_rate"] is None


def test_budget_exhausted_before_every_claim_is_judged(env: dict[str, Any]) -> None:
    # One call for the (embedded) agent leaves one for the judge: every claim after the first is over budget.
    body = answer_body(env, query=MANY_CLAIMS, cfg_updates={"budgets": {"model_calls": 2}})
    seen = marks(body)
    assert len(seen) >= 2, seen
    assert ("unverified", "budget") in seen, seen
    assert set(seen) <= {("supported", None), ("unverified", "budget")}
    assert body["usage"]["model_calls"] <= 2
    assert body["faithfulness"]["unverified_reasons"]["budget"] == seen.count(("unverified", "budget"))


def test_unparseable_judge_results_are_unverified_unparseable(env: dict[str, Any]) -> None:
    def nonsense(_call: int, items: list[JudgeItem]) -> list[JudgeResult]:
        return [JudgeResult(i.item_id, "mungkin") for i in items]  # type: ignore[arg-type]

    body = answer_body(env, judge=rules_with(nonsense))
    assert set(marks(body)) == {("unverified", "unparseable")}


@pytest.mark.parametrize("mode", ["json", "labels"])
def test_llm_judge_with_garbage_output_is_unparseable(env: dict[str, Any], mode: str) -> None:
    body = answer_body(env, judge=LLMJudge(GarbageEngine(), mode=mode))  # type: ignore[arg-type]
    assert body["claims"] and set(marks(body)) == {("unverified", "unparseable")}
    assert body["faithfulness"]["verification"] == "none"


# ---------------------------------------------------------------------------- re-check


def test_altered_figure_is_unsupported_after_the_recheck_confirms(env: dict[str, Any]) -> None:
    judge = rules_with()
    body = answer_body(env, writer=AppendingWriter(facts_citing(ALTERED_FACT, WRONG_SCALE_FACT)), judge=judge)
    for text in (ALTERED_FACT, WRONG_SCALE_FACT):
        claim = claim_by_text(body, text)
        assert (claim["verdict"], claim["unverified_reason"]) == ("unsupported", None), text
        assert claim["citation_keys"] and claim["invalid_citation_keys"] == []
    assert sorted(judge.seen.values()) == [1, 2, 2], "each unsupported segment is judged again, alone"
    assert body["faithfulness"]["verification"] == "partial"
    assert body["faithfulness"]["unsupported"] == 2 and body["faithfulness"]["judge_status"] == "complete"


def test_same_value_written_differently_is_supported(env: dict[str, Any]) -> None:
    body = answer_body(env, writer=ScriptedWriter(lead_and_facts(TRUE_FACT)))
    assert claim_by_text(body, TRUE_FACT)["verdict"] == "supported"
    body = answer_body(env, writer=ScriptedWriter(lead_and_facts(REWRITTEN_FACT)))
    assert claim_by_text(body, REWRITTEN_FACT)["verdict"] == "supported", body["claims"]


def test_recheck_failing_gives_its_own_reason(env: dict[str, Any]) -> None:
    def recheck_down(round_: int, _items: list[JudgeItem]) -> None:
        if round_ >= 2:
            raise ConnectionError("judge replica died")

    writer = AppendingWriter(facts_citing(ALTERED_FACT))
    body = answer_body(env, writer=writer, judge=rules_with(recheck_down))
    claim = claim_by_text(body, ALTERED_FACT)
    assert (claim["verdict"], claim["unverified_reason"]) == ("unverified", "judge_unavailable")


def test_recheck_disputing_makes_it_unverified_disputed(env: dict[str, Any]) -> None:
    def dispute(round_: int, items: list[JudgeItem]) -> list[JudgeResult] | None:
        return [JudgeResult(i.item_id, "supported") for i in items] if round_ >= 2 else None

    body = answer_body(env, writer=AppendingWriter(facts_citing(ALTERED_FACT)), judge=rules_with(dispute))
    claim = claim_by_text(body, ALTERED_FACT)
    assert (claim["verdict"], claim["unverified_reason"]) == ("unverified", "disputed")
    assert body["faithfulness"]["unverified_reasons"]["disputed"] == 1


# ---------------------------------------------------------------------------- framing check


def test_framing_check_failing_marks_every_framing_uncited(env: dict[str, Any]) -> None:
    framing = FailingFraming()
    body = answer_body(env, framing=framing, writer=ScriptedWriter(lead_and_facts(TRUE_FACT)))
    assert framing.calls == 1, "one framing call per answer"
    faith = body["faithfulness"]
    assert faith["framing_check"] == "unavailable" and body["framing"] == [] and faith["framing_total"] == 0
    lead = body["claims"][0]
    assert (lead["kind"], lead["verdict"], lead["citation_keys"]) == ("framing", "uncited", [])
    assert claim_by_text(body, TRUE_FACT)["verdict"] == "supported"
    assert faith["verification"] == "partial" and body["claims_total"] == 2 and body["grounding_rate"] == 0.5
    assert_no_internals(str(body))


def test_framing_that_cites_a_passage_is_judged_as_a_fact(env: dict[str, Any]) -> None:
    def script(passages: Sequence[Passage], _call: int, _fb: Any) -> list[Segment]:
        key = key_of(passages, SOURCE_NEEDLE)
        return [
            Segment(TRUE_FACT, "framing", "paragraph", (key,)),
            Segment(ALTERED_FACT, "framing", "continue", (key,)),
        ]

    body = answer_body(env, writer=ScriptedWriter(script))
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

    body = answer_body(env, writer=ScriptedWriter(script))
    judged, uncited, invalid = body["claims"]
    assert (judged["verdict"], judged["invalid_citation_keys"]) == ("supported", ["P99"])
    assert [p["citation_key"] for p in judged["citations"]] == [
        k for k in judged["citation_keys"] if k != "P99"
    ]
    assert uncited["verdict"] == "uncited" and invalid["verdict"] == "invalid_citation"
    assert invalid["invalid_citation_keys"] == ["P77"] and invalid["citations"] == []
    assert "P77" not in {c["citation_key"] for c in body["citations"]}
    assert body["claims_total"] == 3 and body["claims_supported"] == 1
