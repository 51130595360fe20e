"""v1_gate, refusal_annotation, blocked_annotation, and a round trip through the real RuleJudge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from serve_app.answer.annotate import Annotator
from serve_app.answer.annotation import Annotation, V1Gate, blocked_annotation, refusal_annotation
from serve_app.answer.segments import ComposedAnswer, Segment
from serve_app.answer.v1_gate import v1_gate
from serve_app.wire.schemas import ClaimMapEntry, Faithfulness
from tests.support.answers import StaticFraming, annotate, check_wire, chunk_passage, seg
from tests.support.judges import ScriptedJudge, Verdict

P1 = chunk_passage("P1", "Anggaran pendidikan Aceh tahun 2023 adalah Rp 5 miliar.")
GOOD = "Anggaran pendidikan 2023 adalah Rp 5 miliar."
BAD = "Naik 9 persen dari 2022."


def _gate(
    segments: Sequence[Segment],
    script: dict[str, Verdict | list[Verdict]],
    *,
    ratio: float = 0.5,
    framing: list[bool] | None = None,
) -> tuple[ComposedAnswer, Annotation, V1Gate]:
    composed, ann = annotate(Annotator(ScriptedJudge(script).judge, StaticFraming(framing)), segments, [P1])
    gate = v1_gate(composed, ann, min_kept_ratio=ratio)
    entries: list[Any] = gate.claim_map  # read deep here, as a test
    for entry in entries:
        ClaimMapEntry.model_validate(entry)
        assert gate.answer[entry["start"] : entry["end"]] == entry["text"]
        assert (
            gate.answer.encode("utf-16-le")[2 * entry["start_utf16"] : 2 * entry["end_utf16"]].decode(
                "utf-16-le"
            )
            == entry["text"]
        )
    return composed, ann, gate


def test_v1_removes_what_is_not_supported_and_recomposes_exactly() -> None:
    segments = [
        seg("Berikut datanya 🎓:", "framing"),
        seg(GOOD, "fact", "continue", "P1"),
        seg(BAD, "fact", "continue", "P1"),
        seg("Tanpa sumber.", "fact", "list_item"),
        seg("Dana 2023 **Rp 5 miliar**.", "fact", "list_item", "P1"),
        seg("Sumber tak dikenal.", "fact", "list_item", "P8"),
    ]
    _, ann, gate = _gate(segments, {BAD: "unsupported"}, framing=[False])
    assert (
        gate.answer
        == "Berikut datanya 🎓: Anggaran pendidikan 2023 adalah Rp 5 miliar.\n\n- Dana 2023 **Rp 5 miliar**."
    )
    assert [e["text"] for e in gate.claim_map] == [GOOD, "Dana 2023 **Rp 5 miliar**."]
    assert gate.claim_map[0]["start"] == 19 and gate.claim_map[0]["start_utf16"] == 20
    assert gate.claim_map[0]["citation_keys"] == ["P1"] and gate.provenance_complete
    assert gate.dropped_count == 3
    assert gate.dropped_reasons == {"unsupported": 1, "uncited": 1, "invalid_citation": 1}
    assert (gate.claims_supported, gate.claims_total, gate.grounding_rate) == (2, 5, 0.4)
    assert (gate.claims_supported, gate.claims_total) == (ann.claims_supported, ann.claims_total)
    assert gate.refused and gate.reason == "insufficient_verified_claims"  # 2/5 < 0.5
    assert not v1_gate(
        *_gate(segments, {BAD: "unsupported"}, framing=[False])[:2], min_kept_ratio=0.4
    ).refused


def test_v1_counts_unverified_by_reason_and_drops_uncited_framing() -> None:
    segments = [
        seg("Anggarannya naik tajam.", "framing"),
        seg(GOOD, "fact", "paragraph", "P1"),
        seg(BAD, "fact", "paragraph", "P1"),
    ]
    _, _, gate = _gate(segments, {BAD: ["unsupported", "supported"]}, framing=[True], ratio=0.3)
    assert gate.dropped_reasons == {"uncited": 1, "unverified:disputed": 1}
    assert gate.answer == GOOD and not gate.refused


def test_v1_repairs_layouts_left_orphaned() -> None:
    segments = [
        seg(BAD, "fact", "paragraph", "P1"),
        seg(GOOD, "fact", "continue", "P1"),
        seg("Tabel | Nilai", "framing", "table_header"),
        seg("2023 | Rp 5 miliar", "fact", "table_row", "P1"),
        seg("Butir terakhir.", "fact", "list_item", "P1"),
    ]
    _, _, gate = _gate(segments, {BAD: "unsupported"}, framing=[True], ratio=0.1)
    # The continue whose paragraph was removed starts its own paragraph; rows whose header was removed
    # become paragraphs.
    assert gate.answer == f"{GOOD}\n\n2023 | Rp 5 miliar\n\n- Butir terakhir."
    assert gate.dropped_reasons == {"unsupported": 1, "uncited": 1}


def test_v1_refuses_when_nothing_supported_and_keeps_framing_only_answers() -> None:
    _, _, gate = _gate(
        [seg("Berikut datanya:", "framing"), seg(BAD, "fact", "paragraph", "P1")],
        {BAD: "unsupported"},
        framing=[False],
        ratio=0.0,
    )
    assert gate.refused and gate.claim_map == [] and gate.grounding_rate == 0.0
    _, _, not_found = _gate(
        [seg("Informasi tersebut tidak ditemukan dalam dokumen yang tersedia.", "framing")],
        {},
        framing=[False],
    )
    assert not not_found.refused and not_found.answer.startswith("Informasi")
    assert (not_found.claims_total, not_found.grounding_rate, not_found.dropped_count) == (0, None, 0)


def test_refusal_annotation() -> None:
    ann = refusal_annotation("Maaf, waktu habis.")
    check_wire("Maaf, waktu habis.", ann)
    f = ann.faithfulness
    assert (ann.claims, ann.framing, ann.memory_items, ann.grounding_details) == ([], [], [], [])
    assert (f["unlocated_total"], f["verification"], f["judge_status"], f["framing_check"]) == (
        1,
        "none",
        "skipped",
        "skipped",
    )
    assert ann.grounding_rate is None and "checked" not in f
    unchecked = refusal_annotation("Bahan sumber tidak muat.", checked=False)
    assert unchecked.faithfulness["checked"] is False
    Faithfulness.model_validate(unchecked.faithfulness)


def test_blocked_annotation_keeps_counts_publishes_nothing() -> None:
    segments = [
        seg("Berikut datanya.", "framing"),
        seg(GOOD, "fact", "continue", "P1"),
        seg(BAD, "fact", "continue", "P1"),
    ]
    _, before = annotate(
        Annotator(ScriptedJudge({BAD: "unsupported"}).judge, StaticFraming([False])), segments, [P1]
    )
    blocked = blocked_annotation(before)
    check_wire("Jawaban diblokir.", blocked)
    f = blocked.faithfulness
    assert (blocked.claims, blocked.framing, blocked.memory_items, blocked.grounding_details) == (
        [],
        [],
        [],
        [],
    )
    assert (blocked.claims_supported, blocked.claims_total, blocked.grounding_rate) == (1, 2, 0.5)
    assert (
        f["supported"],
        f["unsupported"],
        f["unlocated_total"],
        f["verification"],
        f["framing_total"],
    ) == (1, 1, 1, "none", 0)
    assert before.faithfulness["verification"] == "partial"  # the original is left untouched


@pytest.mark.parametrize("wiring", ["judge", "collector", "collector_unsplit"])
def test_rule_judge_round_trip_on_a_budget_table(wiring: str) -> None:
    """The real RuleJudge, called directly or through a BatchCollector (as factory.local_judge_fn does)."""
    from judge.batching import BatchCollector
    from judge.rules import RuleJudge

    judge = RuleJudge()
    judge_fn = (
        judge.judge if wiring == "judge" else BatchCollector(judge, batch_wait_timeout_s=0.001).submit_many
    )
    table = (
        "| Tahun | Anggaran pendidikan |\n| --- | --- |\n| 2023 | Rp5.000.000.000 |\n"
        "| 2022 | Rp4.500.000.000 |"
    )
    passage = chunk_passage("P1", table)
    segments = [
        seg("Berikut anggarannya:", "framing"),
        seg("Tahun | Anggaran pendidikan", "framing", "table_header"),
        seg("2023 | Rp5.000.000.000", "fact", "table_row", "P1"),
        seg("2022 | Rp4.600.000.000", "fact", "table_row", "P1"),
        seg("Anggaran pendidikan 2023 sebesar Rp5 miliar.", "fact", "paragraph", "P1"),
        seg("Anggaran pendidikan 2023 sebesar Rp5 juta.", "fact", "continue", "P1"),
    ]
    annotator = Annotator(judge_fn, StaticFraming([False, False]), split_items=wiring != "collector_unsplit")
    composed, ann = annotate(annotator, segments, [passage])
    assert [(c["text"], c["verdict"]) for c in ann.claims] == [
        ("2023 | Rp5.000.000.000", "supported"),  # the row verbatim
        ("2022 | Rp4.600.000.000", "unsupported"),  # an altered figure, confirmed on re-check
        ("Anggaran pendidikan 2023 sebesar Rp5 miliar.", "supported"),  # the same value written differently
        ("Anggaran pendidikan 2023 sebesar Rp5 juta.", "unsupported"),  # a different scale
    ]
    assert ann.grounding_details[1]["reasons"] == ["figure_mismatch"]
    details: list[Any] = ann.grounding_details  # read deep here, as a test
    assert details[0]["passages"][0]["spans"]  # where in the table the row was found
    gate = v1_gate(composed, ann, min_kept_ratio=0.5)
    assert not gate.refused
    assert gate.answer == (
        "Berikut anggarannya:\n\n| Tahun | Anggaran pendidikan |\n| --- | --- |\n"
        "| 2023 | Rp5.000.000.000 |\n\nAnggaran pendidikan 2023 sebesar Rp5 miliar."
    )
