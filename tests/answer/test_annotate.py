"""The annotator on the seed's example and under every fault the contract names."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from judge.types import JudgeItem, JudgeResult
from serve_app.answer.annotate import Annotator
from serve_app.answer.annotation import Annotation
from serve_app.answer.segments import Passage
from serve_app.budget import RequestBudget
from tests.support.answers import StaticFraming, annotate, chunk_passage, make_budget, seg, tool_passage
from tests.support.judges import ScriptedJudge

P1 = chunk_passage("P1", "Anggaran pendidikan Aceh tahun 2023 adalah Rp 5 miliar.")
SUPPORTED = "Anggaran pendidikan 2023 adalah Rp 5 miliar."
RISE = "Naik 9 persen dari 2022."
SEED = [
    seg("Berikut datanya.", "framing"),
    seg(SUPPORTED, "fact", "continue", "P1"),
    seg(RISE, "fact", "continue", "P1"),
]
FACTS = [seg(SUPPORTED, "fact", "paragraph", "P1"), seg(RISE, "fact", "continue", "P1")]
NO_REASONS = {"deadline": 0, "budget": 0, "judge_unavailable": 0, "unparseable": 0, "disputed": 0}


def _unverified(ann: Annotation, reason: str) -> object:
    reasons: Any = ann.faithfulness["unverified_reasons"]  # read deep here, as a test
    return reasons[reason]


def _verdicts(annotation: Annotation) -> list[tuple[str, str, str | None]]:
    claims: list[Any] = annotation.claims  # read deep here, as a test
    return [(c["text"], c["verdict"], c["unverified_reason"]) for c in claims]


def test_seed_example_reproduced_exactly() -> None:
    judge = ScriptedJudge({RISE: "unsupported"})
    composed, ann = annotate(Annotator(judge.judge, StaticFraming([False])), SEED, [P1])
    assert (
        composed.answer
        == "Berikut datanya. Anggaran pendidikan 2023 adalah Rp 5 miliar. Naik 9 persen dari 2022."
    )
    assert ann.framing == [
        {
            "text": "Berikut datanya.",
            "layout": "paragraph",
            "start": 0,
            "end": 16,
            "start_utf16": 0,
            "end_utf16": 16,
        }
    ]
    first, second = ann.claims
    assert {
        k: first[k]
        for k in (
            "verdict",
            "unverified_reason",
            "invalid_citation_keys",
            "kind",
            "layout",
            "start",
            "end",
            "start_utf16",
            "end_utf16",
            "citation_keys",
        )
    } == {
        "verdict": "supported",
        "unverified_reason": None,
        "invalid_citation_keys": [],
        "kind": "fact",
        "layout": "continue",
        "start": 17,
        "end": 61,
        "start_utf16": 17,
        "end_utf16": 61,
        "citation_keys": ["P1"],
    }
    assert first["citations"] == [{"citation_key": "P1", "citation": P1.citation()}]
    assert (second["verdict"], second["start"], second["end"]) == ("unsupported", 62, 86)
    assert ann.faithfulness == {
        "mechanism": "annotate-v2",
        "judge_status": "complete",
        "framing_check": "complete",
        "claims_total": 2,
        "supported": 1,
        "unsupported": 1,
        "unverified": 0,
        "uncited": 0,
        "invalid_citation": 0,
        "from_conversation": 0,
        "unverified_reasons": NO_REASONS,
        "framing_total": 1,
        "unlocated_total": 0,
        "verification": "partial",
        "grounding": {"claims_supported": 1, "claims_total": 2, "grounding_rate": 0.5},
    }
    assert (ann.claims_supported, ann.claims_total, ann.grounding_rate) == (1, 2, 0.5)
    assert ann.memory_items == [SUPPORTED]
    # First pass with both items (one call each, batched again by a collector), then the unsupported one
    # re-checked alone (and confirmed).
    assert [[i.claim for i in call] for call in judge.calls] == [[SUPPORTED], [RISE], [RISE]]


def test_one_call_per_pass_when_not_split() -> None:
    judge = ScriptedJudge({RISE: "unsupported"})
    _, ann = annotate(Annotator(judge.judge, StaticFraming([False]), split_items=False), SEED, [P1])
    assert [[i.claim for i in call] for call in judge.calls] == [[SUPPORTED, RISE], [RISE]]
    assert [c["verdict"] for c in ann.claims] == ["supported", "unsupported"]
    assert "checked" not in ann.faithfulness


def test_all_supported_is_full_and_details_carry_spans() -> None:
    _, ann = annotate(Annotator(ScriptedJudge().judge, StaticFraming([False])), SEED, [P1])
    assert ann.faithfulness["verification"] == "full"
    assert ann.grounding_details[0] == {
        "claim_index": 0,
        "verdict": "supported",
        "unverified_reason": None,
        "reasons": ["scripted_supported"],
        "passages": [{"citation_key": "P1", "spans": [[0, 3]]}],
    }


def test_judge_items_carry_identity_and_context_never_the_question() -> None:
    judge = ScriptedJudge()
    budget = make_budget()
    rows = [
        seg("Rincian anggaran", "framing", "heading"),
        seg("Tahun | Anggaran", "framing", "table_header"),
        seg("2023 | Rp5 miliar", "fact", "table_row", "P1", "P2"),
    ]
    annotate(
        Annotator(judge.judge, StaticFraming()),
        rows,
        [P1, tool_passage("P2", "anggaran 2023: 5000000000")],
        query="Berapa anggaran pendidikan Aceh?",
        budget=budget,
    )
    (item,) = judge.calls[0]
    # A table row is judged whole, as the reader sees it: a Markdown row under its header row.
    assert item.item_id == "2" and item.claim == "| 2023 | Rp5 miliar |"
    assert item.context == "Rincian anggaran\n| Tahun | Anggaran |"  # heading and table header
    assert item.deadline == budget.judge_deadline()
    chunk_identity, tool_identity = item.passages[0].identity, item.passages[1].identity
    assert chunk_identity == {
        "title": "Qanun Aceh Nomor 1 Tahun 2023",
        "type": "Qanun",
        "number": "1",
        "year": 2023,
        "issuer": "Pemerintah Aceh",
        "section": "BAB II › Pasal 12",
        "legal_reference": "Qanun Aceh Nomor 1 Tahun 2023, Pasal 12",
    }
    assert tool_identity["dataset"] == "APBA 2023" and tool_identity["period"] == "2023"
    assert tool_identity["call"] == '{"column": "anggaran", "tool": "table_query"}'
    everything = repr(item)
    assert "Berapa" not in everything and "pendidikan Aceh?" not in everything
    # One judge record per item sent, charged to the request's budget.
    assert [r.role for r in budget.records] == ["judge"]


def test_judge_down_makes_every_cited_segment_unverified() -> None:
    judge = ScriptedJudge(down=True)
    segments = [*SEED, seg("Tanpa sumber.", "fact", "continue")]
    _, ann = annotate(Annotator(judge.judge, StaticFraming([False])), segments, [P1])
    assert _verdicts(ann) == [
        (SUPPORTED, "unverified", "judge_unavailable"),
        (RISE, "unverified", "judge_unavailable"),
        ("Tanpa sumber.", "uncited", None),
    ]
    f: Any = ann.faithfulness  # read deep here, as a test
    assert (f["judge_status"], f["verification"], f["unverified_reasons"]["judge_unavailable"]) == (
        "unavailable",
        "none",
        2,
    )
    assert (f["claims_total"], f["grounding"]["grounding_rate"]) == (3, 0.0)
    assert ann.memory_items == []


def test_judge_slower_than_the_deadline_gives_deadline_returned_batches_keep_theirs() -> None:
    judge = ScriptedJudge(slow={RISE: 5.0})
    started = time.perf_counter()
    _, ann = annotate(
        Annotator(judge.judge, StaticFraming([False])), SEED, [P1], budget=make_budget(deadline_s=0.3)
    )
    assert time.perf_counter() - started < 2.0  # the annotator does not wait past the request's deadline
    assert _verdicts(ann) == [(SUPPORTED, "supported", None), (RISE, "unverified", "deadline")]
    assert ann.faithfulness["judge_status"] == "unavailable"
    assert _unverified(ann, "deadline") == 1
    assert ann.budget is not None
    assert sorted((r.ok, r.error) for r in ann.budget.records) == [(False, "timeout"), (True, None)]


def test_one_slow_call_past_the_deadline_loses_the_whole_pass_when_not_split() -> None:
    judge = ScriptedJudge(slow={RISE: 5.0})
    _, ann = annotate(
        Annotator(judge.judge, StaticFraming([False]), split_items=False),
        SEED,
        [P1],
        budget=make_budget(deadline_s=0.3),
    )
    assert [c["unverified_reason"] for c in ann.claims] == ["deadline", "deadline"]


def test_deadline_already_passed_sends_nothing() -> None:
    judge = ScriptedJudge()
    _, ann = annotate(
        Annotator(judge.judge, StaticFraming([False])), SEED, [P1], budget=make_budget(deadline_s=-1.0)
    )
    assert ann.budget is not None
    assert judge.calls == [] and ann.budget.records == []
    assert [c["unverified_reason"] for c in ann.claims] == ["deadline", "deadline"]


def test_budget_exhausted_leaves_the_rest_unverified_budget() -> None:
    budget = make_budget(calls=2)
    texts = [f"Anggaran pos {n} adalah Rp{n} miliar." for n in range(1, 4)]
    segments = [seg(t, "fact", "paragraph", "P1") for t in texts]
    judge = ScriptedJudge()
    _, ann = annotate(Annotator(judge.judge, StaticFraming()), segments, [P1], budget=budget)
    assert [c["verdict"] for c in ann.claims] == ["supported", "supported", "unverified"]
    assert ann.claims[2]["unverified_reason"] == "budget"
    assert judge.claims_sent == texts[:2] and budget.model_calls_left == 0
    assert _unverified(ann, "budget") == 1


def test_framing_call_reserved_before_the_judge() -> None:
    budget = make_budget(calls=2)
    segments = [
        seg("Berikut datanya.", "framing"),
        seg(SUPPORTED, "fact", "continue", "P1"),
        seg(RISE, "fact", "continue", "P1"),
    ]
    _, ann = annotate(
        Annotator(ScriptedJudge().judge, StaticFraming([False], model_calls=1)), segments, [P1], budget=budget
    )
    assert [c["unverified_reason"] for c in ann.claims] == [None, "budget"]


def test_unparseable_judge_output_is_unverified_unparseable() -> None:
    def garbage(item: JudgeItem) -> JudgeResult:
        return JudgeResult(item.item_id, "maybe")  # type: ignore[arg-type]

    def inconsistent(item: JudgeItem) -> JudgeResult:
        return JudgeResult(item.item_id, "supported", unverified_reason="deadline")

    def llm_said_nothing(item: JudgeItem) -> JudgeResult:
        return JudgeResult(item.item_id, "unverified", ("no_label",), "unparseable")

    third = "Belanja pegawai Rp1 miliar."
    judge = ScriptedJudge({SUPPORTED: garbage, RISE: inconsistent, third: llm_said_nothing})
    segments = [*SEED, seg(third, "fact", "continue", "P1")]
    _, ann = annotate(Annotator(judge.judge, StaticFraming([False])), segments, [P1])
    assert [c["unverified_reason"] for c in ann.claims] == ["unparseable"] * 3
    assert _unverified(ann, "unparseable") == 3


def test_wrong_result_count_is_judge_unavailable() -> None:
    class Short(ScriptedJudge):
        async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeResult]:
            return (await super().judge(items))[:-1]

    _, ann = annotate(Annotator(Short().judge, StaticFraming([False])), SEED, [P1])
    assert [c["unverified_reason"] for c in ann.claims] == ["judge_unavailable"] * 2


def test_recheck_disputing_gives_disputed() -> None:
    judge = ScriptedJudge({RISE: ["unsupported", "supported"]})
    _, ann = annotate(Annotator(judge.judge, StaticFraming([False])), SEED, [P1])
    assert _verdicts(ann)[1] == (RISE, "unverified", "disputed")
    assert _unverified(ann, "disputed") == 1
    assert ann.faithfulness["judge_status"] == "unavailable"
    assert ann.faithfulness["verification"] == "partial"
    assert ann.budget is not None
    assert [r.role for r in ann.budget.records] == ["judge"] * 3  # two first-pass items and one re-check


def test_recheck_failing_gives_its_own_reason() -> None:
    judge = ScriptedJudge({RISE: ["unsupported", "raise"]})
    _, ann = annotate(Annotator(judge.judge, StaticFraming([False])), SEED, [P1])
    assert _verdicts(ann) == [(SUPPORTED, "supported", None), (RISE, "unverified", "judge_unavailable")]


def test_recheck_beyond_the_budget_gives_budget() -> None:
    judge = ScriptedJudge({RISE: "unsupported"})
    _, ann = annotate(Annotator(judge.judge, StaticFraming()), FACTS, [P1], budget=make_budget(calls=2))
    assert _verdicts(ann)[1] == (RISE, "unverified", "budget")
    assert judge.claims_sent == [SUPPORTED, RISE]


def test_without_recheck_first_pass_verdicts_stand() -> None:
    judge = ScriptedJudge({RISE: "unsupported"})
    _, ann = annotate(Annotator(judge.judge, StaticFraming(), recheck=False), FACTS, [P1])
    assert [c["verdict"] for c in ann.claims] == ["supported", "unsupported"]
    assert judge.claims_sent == [SUPPORTED, RISE]


def test_deterministic_judge_is_not_rechecked_and_the_log_says_so() -> None:
    judge = ScriptedJudge({RISE: "unsupported"})
    annotator = Annotator(judge.judge, StaticFraming(), deterministic_judge=True)
    _, ann = annotate(annotator, FACTS, [P1])
    assert [c["verdict"] for c in ann.claims] == ["supported", "unsupported"]
    assert judge.claims_sent == [SUPPORTED, RISE]  # one pass, no second call for RISE
    assert ann.budget is not None
    log = ann.budget.records_as_dicts()
    assert [entry.get("note") for entry in log] == [None, "recheck_skipped:deterministic_judge"]
    assert len(log) == ann.budget.usage()["model_calls"]


def test_model_judge_is_rechecked() -> None:
    judge = ScriptedJudge({RISE: "unsupported"})
    _, ann = annotate(Annotator(judge.judge, StaticFraming(), deterministic_judge=False), FACTS, [P1])
    assert judge.claims_sent == [SUPPORTED, RISE, RISE]
    assert ann.budget is not None
    assert all("note" not in entry for entry in ann.budget.records_as_dicts())


def test_framing_check_failing_makes_every_framing_uncited() -> None:
    segments = [
        seg("Halo!", "framing"),
        seg("Berikut datanya:", "framing", "paragraph"),
        seg(SUPPORTED, "fact", "list_item", "P1"),
    ]
    _, ann = annotate(Annotator(ScriptedJudge().judge, StaticFraming(error=TimeoutError())), segments, [P1])
    assert ann.framing == []
    assert [(c["kind"], c["verdict"]) for c in ann.claims] == [
        ("framing", "uncited"),
        ("framing", "uncited"),
        ("fact", "supported"),
    ]
    assert ann.faithfulness["framing_check"] == "unavailable"
    assert ann.faithfulness["verification"] == "partial"


def test_framing_check_sees_question_and_all_framing_once() -> None:
    checker = StaticFraming([False, True])
    segments = [
        seg("Berikut datanya.", "framing"),
        seg("Anggarannya naik.", "framing", "continue"),
        seg(SUPPORTED, "fact", "continue", "P1"),
    ]
    _, ann = annotate(Annotator(ScriptedJudge().judge, checker), segments, [P1], query="Berapa anggaran?")
    assert checker.seen == [("Berapa anggaran?", ["Berikut datanya.", "Anggarannya naik."])]
    assert [f["text"] for f in ann.framing] == ["Berikut datanya."]
    assert ann.claims[0]["text"] == "Anggarannya naik."
    assert (ann.claims[0]["kind"], ann.claims[0]["verdict"], ann.claims[0]["citation_keys"]) == (
        "framing",
        "uncited",
        [],
    )


def test_framing_check_slow_past_the_deadline_is_unavailable() -> None:
    class Slow(StaticFraming):
        async def check(
            self, query: str, framing: list[str], passages: list[Passage], budget: RequestBudget | None
        ) -> list[bool]:
            import asyncio

            await asyncio.sleep(5)
            return [False]

    started = time.perf_counter()
    _, ann = annotate(
        Annotator(ScriptedJudge().judge, Slow()),
        [seg("Halo!", "framing")],
        [],
        budget=make_budget(deadline_s=0.2),
    )
    assert time.perf_counter() - started < 2.0
    assert ann.faithfulness["framing_check"] == "unavailable" and ann.claims[0]["verdict"] == "uncited"


def test_framing_checker_wrong_length_is_unavailable() -> None:
    _, ann = annotate(
        Annotator(ScriptedJudge().judge, StaticFraming([False, False])), [seg("Halo!", "framing")], []
    )
    assert ann.faithfulness["framing_check"] == "unavailable"


def test_statuses_skipped_when_nothing_to_check() -> None:
    _, ann = annotate(Annotator(ScriptedJudge().judge, StaticFraming()), [seg("Tanpa sumber.")], [])
    f: Any = ann.faithfulness  # read deep here, as a test
    assert (f["judge_status"], f["framing_check"], f["verification"], f["uncited"]) == (
        "skipped",
        "skipped",
        "none",
        1,
    )
    _, greeting = annotate(
        Annotator(ScriptedJudge().judge, StaticFraming([False])), [seg("Halo!", "framing")], []
    )
    g = greeting.faithfulness
    assert (g["judge_status"], g["framing_check"], g["claims_total"], g["verification"]) == (
        "skipped",
        "complete",
        0,
        "none",
    )
    assert g["grounding"] == {"claims_supported": 0, "claims_total": 0, "grounding_rate": None}


def test_offsets_are_copied_from_the_spans_including_utf16() -> None:
    segments = [
        seg("Halo 👋 berikut datanya.", "framing"),
        seg("Dana **Rp5 miliar** 🎓 untuk sekolah.", "fact", "list_item", "P1"),
        seg("Belanja 2023 | Rp 1 miliar", "fact", "paragraph", "P1"),
    ]
    composed, ann = annotate(Annotator(ScriptedJudge().judge, StaticFraming([False])), segments, [P1])
    spans = {(s.start, s.end, s.start_utf16, s.end_utf16) for s in composed.spans}
    got = {(x["start"], x["end"], x["start_utf16"], x["end_utf16"]) for x in [*ann.claims, *ann.framing]}
    assert got == spans
    first: Any = ann.claims[0]
    assert first["start_utf16"] == first["start"] + 1  # after one emoji (two UTF-16 units)
    assert ann.faithfulness["unlocated_total"] == 0
