"""Checks on the real texts in ../shared/data (skipped when the folder is absent): statute figures with their
spelled twins and OCR noise, an APBA line item, and the development set's balanced accuracy."""

from __future__ import annotations

import csv
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest

from judge.rules import check_claim
from judge.types import JudgePassage
from language.numbers import extract_figures, figures_equal

DATA = Path(
    os.environ.get("ACEH_SHARED_DATA", Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
)
APBN_2023 = DATA / "indo_legal_corpus" / "uu" / "2022" / "28.md"
APBA = DATA / "apba_aceh_2025" / "MASTER_01_RINCIAN_APBD.csv"

pytestmark = pytest.mark.data


def _sentence_with(path: Path, needle: str) -> str:
    if not path.exists():
        pytest.skip(f"{path} is absent")
    text = path.read_text(encoding="utf-8")
    index = text.index(needle)
    start = max(0, text.rfind(". ", 0, index) + 2)
    end = text.index(").", index) + 2
    return text[start:end]


def test_apbn_2023_tax_revenue_and_its_spelled_twin() -> None:
    passage = _sentence_with(APBN_2023, "Rp2.021.223.677.000.000,00")
    amounts = [f for f in extract_figures(passage) if f.kind == "amount"]
    digits = next(f for f in amounts if not f.spelled and f.value == Decimal("2021223677000000"))
    spelled = next(f for f in amounts if f.spelled)
    assert figures_equal(spelled, digits)
    source = JudgePassage(
        "P1", passage, {"title": "Anggaran Pendapatan dan Belanja Negara Tahun Anggaran 2023"}
    )
    assert check_claim(
        "Penerimaan perpajakan direncanakan sebesar Rp2.021,22 triliun.", [source]
    ).verdict == ("supported")
    assert check_claim("Penerimaan perpajakan direncanakan sebesar Rp2.021,22 miliar.", [source]).reasons == (
        "scale_mismatch",
    )


def test_ocr_noise_in_the_real_statute() -> None:
    if not APBN_2023.exists():
        pytest.skip("corpus absent")
    text = APBN_2023.read_text(encoding="utf-8")
    for noisy, value in (
        ("Rpl.963.482.528.000.000,00", "1963482528000000"),
        ("RpS.076.940.000.000,00", None),
    ):
        if noisy not in text:
            continue
        index = text.index(noisy)
        window = text[index : text.index(")", index) + 1]
        digits, spelled = [f for f in extract_figures(window) if f.kind == "amount"][:2]
        assert digits.ocr_repaired and spelled.spelled
        assert digits.value == spelled.value
        if value:
            assert digits.value == Decimal(value)
    years = [m.group() for m in re.finditer(r"\b2O2O\b", text)]
    if years:
        assert any(f.period == "2020" and f.ocr_repaired for f in extract_figures("pada tahun 2O2O"))


def test_apba_line_item_restated_in_other_notations() -> None:
    if not APBA.exists():
        pytest.skip("APBA CSV absent")
    with APBA.open(encoding="utf-8-sig") as handle:
        row = next(csv.DictReader(handle))
    value = int(float(row["jumlah_rp"]))
    full = f"{value:,}".replace(",", ".")
    passage = JudgePassage(
        "P1",
        f"Pada {row['nama_skpd']}, {row['uraian']} Tahun Anggaran {row['tahun_anggaran']} "
        f"sebesar Rp{full},00.",
    )
    trillions = f"{Decimal(value) / 10**12:.2f}".replace(".", ",")
    claim = "{uraian} tahun {year} sebesar Rp{amount} triliun."
    right = claim.format(uraian=row["uraian"], year=row["tahun_anggaran"], amount=trillions)
    assert check_claim(right, [passage]).verdict == "supported"
    wrong = claim.format(uraian=row["uraian"], year=int(row["tahun_anggaran"]) - 1, amount=trillions)
    assert check_claim(wrong, [passage]).reasons == ("period_mismatch",)


def test_development_set_accuracy() -> None:
    if not (APBA.exists() and APBN_2023.exists()):
        pytest.skip("shared data absent")
    from benchmarks.datasets.build_judge_dev import build

    items = [i for i in build(DATA, quick=True) if i["split"] == "dev"]
    correct = {"supported": [0, 0], "unsupported": [0, 0]}
    for item in items:
        passages = [JudgePassage(p["key"], p["text"], p["identity"]) for p in item["passages"]]
        verdict = check_claim(item["claim"], passages, context=item["context"]).verdict
        correct[item["label"]][0] += verdict == item["label"]
        correct[item["label"]][1] += 1
    balanced = sum(hit / total for hit, total in correct.values()) / 2
    assert balanced >= 0.95, correct
