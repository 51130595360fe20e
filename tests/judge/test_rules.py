"""check_claim, hard_contradiction, RuleJudge: one case per reason code, tables, identity, English claims."""

from __future__ import annotations

import asyncio
import time

import pytest

from judge.rules import RuleCheck, RuleJudge, check_claim, hard_contradiction
from judge.types import JudgeItem, JudgePassage
from tests.support.claims import ClaimCase, claim_cases

APBN = JudgePassage(
    "P1",
    "(1) Penerimaan Perpajakan sebagaimana dimaksud dalam Pasal 3 huruf a direncanakan sebesar "
    "Rp2.021.223.677.000.000,00 (dua kuadriliun dua puluh satu triliun dua ratus dua puluh tiga miliar enam "
    "ratus tujuh puluh tujuh juta rupiah). (2) Penerimaan Negara Bukan Pajak sebagaimana dimaksud dalam "
    "Pasal 3 huruf b direncanakan sebesar Rp441.395.230.000.000,00.",
    {
        "title": "Anggaran Pendapatan dan Belanja Negara Tahun Anggaran 2023",
        "type": "UU",
        "number": "28",
        "year": 2022,
    },
)
TABLE = JudgePassage(
    "P2",
    "Pagu urusan Pemerintah Aceh\n| Urusan | Pagu 2023 | Pagu 2024 |\n|---|---|---|\n"
    "| Pendidikan | Rp871.667.219.294 | Rp900.000.000.000 |\n"
    "| Kesehatan | Rp500.000.000.000 | Rp520.000.000.000 |",
)
RISE = JudgePassage("P3", "Pendapatan asli daerah Aceh tahun 2024 meningkat 9 persen dibanding tahun 2023.")
FINE = JudgePassage(
    "P4",
    "Setiap orang yang melanggar dipidana dengan pidana penjara paling lama 3 (tiga) tahun dan denda paling "
    "banyak Rp250.000.000,00 (dua ratus lima puluh juta rupiah).",
)
QANUN = JudgePassage(
    "P5",
    "Qanun ini mengatur pengelolaan keuangan Aceh yang dilaksanakan secara tertib dan transparan.",
    {
        "title": "Qanun Aceh Nomor 1 Tahun 2023 tentang Pengelolaan Keuangan Aceh",
        "type": "Qanun",
        "number": "1",
        "year": 2023,
        "issuer": "Pemerintah Aceh",
    },
)
HEADER = "| Urusan | Pagu 2023 | Pagu 2024 |"


@pytest.mark.parametrize(
    ("claim", "passage", "context"),
    [
        ("Penerimaan perpajakan dalam APBN 2023 direncanakan sebesar Rp2.021,22 triliun.", APBN, ""),
        ("Penerimaan perpajakan APBN 2023 sekitar 2,02 kuadriliun rupiah.", APBN, ""),
        ("Penerimaan perpajakan direncanakan Rp2.021.223.677.000.000.", APBN, ""),
        ("Tax revenue in the 2023 state budget is planned at IDR 2,021.22 trillion.", APBN, ""),
        ("Pagu pendidikan tahun 2023 sebesar Rp871,67 miliar.", TABLE, ""),
        ("Pagu pendidikan tahun 2023 sekitar Rp872 miliar.", TABLE, ""),
        ("| Pendidikan | Rp871.667.219.294 | Rp900.000.000.000 |", TABLE, HEADER),
        ("| Pendidikan | Rp871,67 miliar | Rp900 miliar |", TABLE, HEADER),
        ("Pendapatan asli daerah Aceh tahun 2024 naik 9 persen.", RISE, ""),
        ("Pelanggar dipidana penjara paling lama 3 tahun dan denda paling banyak Rp250 juta.", FINE, ""),
        ("Qanun Aceh Nomor 1 Tahun 2023 mengatur pengelolaan keuangan Aceh.", QANUN, ""),
    ],
)
def test_supported(claim: str, passage: JudgePassage, context: str) -> None:
    result = check_claim(claim, [passage], context=context)
    assert result == RuleCheck("supported", (), result.spans), result
    assert result.spans and all(key == passage.key for key, _, _ in result.spans)


@pytest.mark.parametrize(
    "case",
    [
        *claim_cases(
            "apbn",
            APBN,
            ("Penerimaan perpajakan direncanakan sebesar Rp2.021,22 miliar.", "scale_mismatch"),
            ("Penerimaan perpajakan direncanakan sebesar Rp2.021,32 triliun.", "figure_mismatch"),
            ("Penerimaan perpajakan tahun 2024 direncanakan Rp2.021,22 triliun.", "period_mismatch"),
            ("Penerimaan negara bukan pajak direncanakan Rp2.021,22 triliun.", "entity_missing"),
            ("Penerimaan perpajakan direncanakan sebesar US$2.021,22 triliun.", "unit_mismatch"),
            ("Penerimaan perpajakan tidak direncanakan sebesar Rp2.021,22 triliun.", "polarity_conflict"),
            ("Penerimaan perpajakan diatur dalam Pasal 4 sebesar Rp2.021,22 triliun.", "reference_mismatch"),
            ("Terdapat 3 jenis penerimaan perpajakan.", "reference_as_quantity"),
        ),
        *claim_cases(
            "table",
            TABLE,
            ("Pagu pendidikan tahun 2023 sebesar Rp872 miliar.", "rounding_unmarked"),
            ("Pagu kesehatan tahun 2023 sebesar Rp871,67 miliar.", "entity_missing"),
            ("Pagu pendidikan tahun 2023 naik menjadi Rp871,67 miliar.", "direction_unsupported"),
        ),
        *claim_cases(
            "table_row",
            TABLE,
            ("| Pendidikan | Rp900.000.000.000 | Rp871.667.219.294 |", "period_mismatch"),
            context=HEADER,
        ),
        *claim_cases(
            "rise", RISE, ("Pendapatan asli daerah Aceh tahun 2024 turun 9 persen.", "polarity_conflict")
        ),
        *claim_cases(
            "fine", FINE, ("Pelanggar dipidana penjara paling singkat 3 tahun.", "polarity_conflict")
        ),
        *claim_cases(
            "qanun",
            QANUN,
            ("Qanun Aceh Nomor 2 Tahun 2023 mengatur pengelolaan keuangan Aceh.", "reference_mismatch"),
            ("Qanun ini mengatur pajak kendaraan bermotor.", "low_coverage"),
        ),
    ],
)
def test_unsupported_with_reason(case: ClaimCase) -> None:
    case.check()


def test_no_passage_is_unsupported() -> None:
    assert check_claim("Rp5 miliar.", []).reasons == ("no_passage",)


def test_any_cited_passage_may_ground_the_figure() -> None:
    result = check_claim("Pagu pendidikan tahun 2023 sebesar Rp871,67 miliar.", [APBN, TABLE])
    assert result.verdict == "supported" and result.spans[0][0] == "P2"


def test_prose_context_gives_the_period() -> None:
    claim = "Pagu pendidikan sebesar Rp871,67 miliar."
    assert check_claim(claim, [TABLE], context="## Pagu 2023").verdict == "supported"
    assert "period_mismatch" in check_claim(claim, [TABLE], context="## Pagu 2024").reasons


def test_hard_contradiction_codes() -> None:
    assert hard_contradiction("Penerimaan perpajakan direncanakan Rp2.021,22 miliar.", [APBN]) == (
        "scale_mismatch",
    )
    assert (
        hard_contradiction("Penerimaan perpajakan APBN 2023 direncanakan Rp2.021,22 triliun.", [APBN]) == ()
    )
    # missing content words, and negation without figures, are the LLM's call, not a hard contradiction
    denial = "Qanun ini tidak mengatur pengelolaan keuangan Aceh."
    assert check_claim(denial, [QANUN]).reasons == ("polarity_conflict",)
    assert hard_contradiction(denial, [QANUN]) == ()
    assert (
        hard_contradiction("Penerimaan perpajakan yang progresif sebesar Rp2.021,22 triliun.", [APBN]) == ()
    )


def test_lenient_ratio_tolerates_lower_case_paraphrase_only() -> None:
    claim = "Penerimaan perpajakan yang progresif direncanakan Rp2.021,22 triliun."
    assert check_claim(claim, [APBN], max_unknown_ratio=0.0).reasons == ("entity_missing",)
    assert check_claim(claim, [APBN], max_unknown_ratio=0.5).verdict == "supported"
    assert check_claim(claim, [APBN]).verdict == "supported"  # the default tolerates a restatement's words
    named = "Penerimaan perpajakan Kementerian direncanakan Rp2.021,22 triliun."
    assert check_claim(named, [APBN], max_unknown_ratio=0.5).verdict == "unsupported"
    # a budget term the passage does not write is never a restatement's own word
    term = "Penerimaan perpajakan daerah direncanakan Rp2.021,22 triliun."
    assert check_claim(term, [APBN]).verdict == "unsupported"


def _item(
    item_id: str, claim: str, passages: tuple[JudgePassage, ...], deadline: float | None = None
) -> JudgeItem:
    return JudgeItem(item_id, claim, passages, deadline=deadline)


def test_rule_judge_maps_items_in_order() -> None:
    items = [
        _item("a", "Pagu pendidikan tahun 2023 sebesar Rp871,67 miliar.", (TABLE,)),
        _item("b", "Pagu pendidikan tahun 2023 sebesar Rp871,67 juta.", (TABLE,)),
        _item("c", "Pagu pendidikan tahun 2023 sebesar Rp871,67 miliar.", (TABLE,), deadline=time.time() - 1),
    ]
    results = asyncio.run(RuleJudge().judge(items))
    assert [r.item_id for r in results] == ["a", "b", "c"]
    assert [r.verdict for r in results] == ["supported", "unsupported", "unverified"]
    assert results[0].spans and results[1].reasons == ("scale_mismatch",)
    assert results[2].unverified_reason == "deadline"


def test_rule_judge_never_raises_for_one_bad_item() -> None:
    broken = JudgeItem("x", None, (TABLE,))  # type: ignore[arg-type]
    good = _item("y", "Pagu pendidikan tahun 2023 sebesar Rp871,67 miliar.", (TABLE,))
    results = asyncio.run(RuleJudge().judge([broken, good]))
    assert results[0].verdict == "unverified" and results[0].unverified_reason == "judge_unavailable"
    assert results[1].verdict == "supported"


def test_rule_judge_deadline_uses_injected_clock() -> None:
    item = _item("a", "Pagu pendidikan tahun 2023 sebesar Rp871,67 miliar.", (TABLE,), deadline=100.0)
    assert asyncio.run(RuleJudge(clock=lambda: 50.0).judge([item]))[0].verdict == "supported"
    assert asyncio.run(RuleJudge(clock=lambda: 150.0).judge([item]))[0].verdict == "unverified"
