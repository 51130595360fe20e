"""Citation cases, from_conversation, framing that cites, coverage, and "only supported looks verified"."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.types import JudgeItem, JudgeResult
from serve_app.answer.annotate import Annotator
from serve_app.answer.annotation import unlocated_pieces
from serve_app.answer.compose import compose
from serve_app.answer.segments import AnnotationRequest
from tests.support.answers import StaticFraming, annotate, check_wire, chunk_passage, make_budget, seg
from tests.support.judges import ScriptedJudge

P1 = chunk_passage("P1", "Anggaran pendidikan Aceh tahun 2023 adalah Rp 5 miliar.")
P2 = chunk_passage("P2", "Belanja pegawai tahun 2023 adalah Rp 2 miliar.")
HIDDEN = chunk_passage("P3", "Catatan internal yang tidak boleh dikutip.", citable=False)


def test_uncited_all_invalid_and_partly_invalid() -> None:
    judge = ScriptedJudge()
    segments = [
        seg("Tanpa rujukan sama sekali.", "fact", "paragraph"),
        seg("Rujukan yang tidak pernah ditampilkan.", "fact", "paragraph", "P9"),
        seg("Rujukan yang tidak boleh dikutip.", "fact", "paragraph", "P3", "P9"),
        seg("Sebagian rujukannya valid.", "fact", "paragraph", "P9", "P1", "P3", "P1"),
    ]
    _, ann = annotate(Annotator(judge.judge, StaticFraming()), segments, [P1, P2, HIDDEN])
    uncited, unknown, hidden, partly = ann.claims
    assert (uncited["verdict"], uncited["citation_keys"], uncited["citations"]) == ("uncited", [], [])
    assert (unknown["verdict"], unknown["invalid_citation_keys"], unknown["citations"]) == (
        "invalid_citation",
        ["P9"],
        [],
    )
    assert (hidden["verdict"], hidden["invalid_citation_keys"]) == ("invalid_citation", ["P3", "P9"])
    assert partly["verdict"] == "supported"
    assert partly["citation_keys"] == ["P9", "P1", "P3"] and partly["invalid_citation_keys"] == ["P9", "P3"]
    assert partly["citations"] == [{"citation_key": "P1", "citation": P1.citation()}]
    # Only the segment with a valid key was judged, and only on that key.
    (item,) = judge.calls[0]
    assert [p.key for p in item.passages] == ["P1"]
    f = ann.faithfulness
    assert (f["uncited"], f["invalid_citation"], f["supported"], f["claims_total"]) == (1, 2, 1, 4)
    assert f["judge_status"] == "complete" and f["verification"] == "partial"


def test_invalid_only_answer_skips_the_judge() -> None:
    judge = ScriptedJudge()
    _, ann = annotate(
        Annotator(judge.judge, StaticFraming()), [seg("Angka dari mana?", "fact", "paragraph", "P7")], [P1]
    )
    assert judge.calls == [] and ann.faithfulness["judge_status"] == "skipped"
    assert ann.faithfulness["verification"] == "none"


def test_framing_that_cites_is_judged_as_a_fact() -> None:
    judge = ScriptedJudge({"Menurut Qanun, anggarannya naik.": "unsupported"})
    checker = StaticFraming()
    segments = [
        seg("Menurut Qanun, anggarannya naik.", "framing", "paragraph", "P1"),
        seg("Pengantar tanpa rujukan.", "framing", "paragraph"),
    ]
    _, ann = annotate(Annotator(judge.judge, checker), segments, [P1])
    assert checker.seen[0][1] == [
        "Pengantar tanpa rujukan."
    ]  # citing framing never reaches the framing check
    (claim,) = ann.claims
    assert (claim["kind"], claim["verdict"], claim["citation_keys"]) == ("framing", "unsupported", ["P1"])
    assert [f["text"] for f in ann.framing] == ["Pengantar tanpa rujukan."]


def test_from_conversation_is_neutral_and_not_counted() -> None:
    judge = ScriptedJudge()
    earlier = "Anggaran pendidikan Aceh tahun 2023 adalah Rp 5 miliar."
    segments = [
        seg("anggaran  pendidikan aceh tahun 2023 adalah Rp 5 miliar", "fact", "paragraph", "P1"),  # equal
        seg("adalah Rp 5 miliar", "fact", "continue"),  # contained, uncited otherwise
        seg("Belanja pegawai tahun 2023 adalah Rp 2 miliar.", "fact", "paragraph", "P2"),
        seg(
            "Anda bertanya tentang anggaran.", "framing", "paragraph"
        ),  # checkable framing repeating the user
    ]
    checker = StaticFraming([True])
    _, ann = annotate(
        Annotator(judge.judge, checker),
        segments,
        [P1, P2],
        conversation=[earlier, "Anda bertanya tentang anggaran?"],
    )
    assert [c["verdict"] for c in ann.claims] == [
        "from_conversation",
        "from_conversation",
        "supported",
        "from_conversation",
    ]
    assert judge.claims_sent == ["Belanja pegawai tahun 2023 adalah Rp 2 miliar."]
    f = ann.faithfulness
    assert (f["from_conversation"], f["claims_total"], f["supported"]) == (3, 1, 1)
    assert f["grounding"] == {"claims_supported": 1, "claims_total": 1, "grounding_rate": 1.0}
    assert f["verification"] == "partial"  # from_conversation is "anything else", never full
    assert ann.memory_items == ["Belanja pegawai tahun 2023 adalah Rp 2 miliar."]


def test_short_fragments_are_not_conversation_repeats() -> None:
    _, ann = annotate(
        Annotator(ScriptedJudge().judge, StaticFraming()),
        [seg("Rp", "fact", "paragraph", "P1")],
        [P1],
        conversation=["Berapa Rp anggarannya?"],
    )
    assert ann.claims[0]["verdict"] == "supported"


def test_unlocated_pieces_ignores_only_server_layout() -> None:
    segments = [
        seg("Judul", "framing", "heading"),
        seg("Pengantar:", "framing"),
        seg("Butir satu.", "fact", "list_item"),
        seg("Butir dua.", "fact", "list_item"),
        seg("Tahun | Nilai", "framing", "table_header"),
        seg("2023 | 5", "fact", "table_row"),
        seg("2024 | 6", "fact", "table_row"),
    ]
    composed = compose(segments)
    spans = [(s.start, s.end) for s in composed.spans]
    assert unlocated_pieces(composed.answer, spans) == 0
    assert unlocated_pieces(composed.answer, spans[:2] + spans[3:]) == 1  # one list item not covered
    assert unlocated_pieces(composed.answer, [spans[0], spans[-1]]) == 1  # one run from "Pengantar" to a row
    assert unlocated_pieces(composed.answer, [spans[1], spans[5]]) == 3
    assert unlocated_pieces("Penolakan.", []) == 1 and unlocated_pieces("", []) == 0
    assert unlocated_pieces("a -x b", [(0, 1), (5, 6)]) == 1


_VERDICT = st.sampled_from(["supported", "unsupported", "unverified", "maybe", "raise"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(_VERDICT, min_size=1, max_size=5),
    again=st.lists(_VERDICT, min_size=5, max_size=5),
    calls=st.integers(0, 12),
    framing_fails=st.booleans(),
    split=st.booleans(),
)
def test_nothing_unverified_ever_looks_supported(
    first: list[str], again: list[str], calls: int, framing_fails: bool, split: bool
) -> None:
    texts = [f"Anggaran pos {n} adalah Rp{n} miliar." for n in range(len(first))]
    seen: set[str] = set()

    def scripted(text: str, position: int) -> Callable[[JudgeItem], JudgeResult]:
        def answer(item: JudgeItem) -> JudgeResult:
            # Called once per judge call: the first time is the first pass, later ones are re-checks.
            verdict = first[position] if text not in seen else again[position]
            seen.add(text)
            if verdict == "raise":
                raise RuntimeError("judge fell over")
            reason = "judge_unavailable" if verdict == "unverified" else None
            return JudgeResult(item.item_id, verdict, (), reason)  # type: ignore[arg-type]

        return answer

    judge = ScriptedJudge({t: scripted(t, i) for i, t in enumerate(texts)})
    segments = [seg("Berikut datanya:", "framing"), *(seg(t, "fact", "list_item", "P1") for t in texts)]
    checker = StaticFraming([False], error=RuntimeError("down") if framing_fails else None)
    composed = compose(segments)
    ann = asyncio.run(
        Annotator(judge.judge, checker, split_items=split).annotate(
            AnnotationRequest(composed, {"P1": P1}, "q", []), budget=make_budget(calls=calls)
        )
    )
    check_wire(composed.answer, ann)
    first_pass_ids = set(judge.claims_sent)
    for position, claim in enumerate(c for c in ann.claims if c["kind"] == "fact"):
        if claim["verdict"] == "supported":
            # Supported only when the judge said so on the first pass and no re-check was needed.
            assert claim["text"] in first_pass_ids and first[position] == "supported"
        if first[position] in ("maybe", "raise") or claim["text"] not in first_pass_ids:
            assert claim["verdict"] == "unverified"
    assert ann.faithfulness["framing_check"] == ("unavailable" if framing_fails else "complete")
    assert ann.budget is not None
    assert len(ann.budget.records) <= calls
