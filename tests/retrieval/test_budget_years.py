"""Fiscal-year identity of state-budget laws: the title's "Tahun Anggaran Y" and kind decide, not the law's
own enactment year or the words its neighbours share. Invented titles and text."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.embeddings import HashingEncoder
from retrieval.budget_years import (
    ACCOUNTABILITY,
    ORIGINAL,
    REVISED,
    BudgetAsk,
    BudgetLaw,
    BudgetLaws,
    budget_ask,
    law_of_title,
)
from retrieval.documents import with_opening_title
from retrieval.ingest import ingest
from retrieval.rerankers import FeatureReranker
from retrieval.retriever import Retriever
from retrieval.types import DocumentIdentity

APBN = "ANGGARAN PENDAPATAN DAN BELANJA NEGARA"


def _title(head: str, fiscal: str) -> str:
    return f"{head} {APBN} TAHUN ANGGARAN {fiscal}"


_AMENDS = "UNDANG-UNDANG NOMOR 3 TAHUN 2031 TENTANG PERUBAHAN ATAS UNDANG-UNDANG NOMOR 7 TAHUN 2030 TENTANG"


@pytest.mark.parametrize(
    ("title", "law"),
    [
        (_title("UNDANG-UNDANG NOMOR 7 TAHUN 2030 TENTANG", "2031"), BudgetLaw(2031, ORIGINAL)),
        (_title(_AMENDS, "2031"), BudgetLaw(2031, REVISED)),
        (
            _title("UNDANG-UNDANG NOMOR 9 TAHUN 2032 TENTANG PERTANGGUNGJAWABAN ATAS PELAKSANAAN", "2031"),
            BudgetLaw(2031, ACCOUNTABILITY),
        ),
        (_title("TAMBAHAN DAN PERUBAHAN ATAS", "1977/1978"), BudgetLaw(1977, REVISED)),
        (_title("UNDANG-UNDANG NOMOR 5 TAHUN 2O30 TENTANG", "2O31"), BudgetLaw(2031, ORIGINAL)),
        (
            "No.77, 2032 KEUANGAN. APBN. Tahun 2031. Pertanggungjawaban. (Penjelasan)",
            BudgetLaw(2031, ACCOUNTABILITY),
        ),
        ("No.12, 2031 KEUANGAN NEGARA. Perubahan. APBN. 2031. (Penjelasan)", BudgetLaw(2031, REVISED)),
        ("UNDANG-UNDANG NOMOR 4 TAHUN 2030 TENTANG DANA DESA YANG BERSUMBER DARI " + APBN, None),
        (
            "QANUN ACEH NOMOR 1 TAHUN 2030 TENTANG ANGGARAN PENDAPATAN DAN BELANJA ACEH TAHUN ANGGARAN 2030",
            None,
        ),
    ],
)
def test_law_of_title(title: str, law: BudgetLaw | None) -> None:
    assert law_of_title(title) == law


@pytest.mark.parametrize(
    ("question", "ask"),
    [
        ("Berapa belanja pegawai dalam APBN 2031?", BudgetAsk(2031, ORIGINAL)),
        ("Berapa belanja pegawai dalam APBN-P 2031?", BudgetAsk(2031, REVISED)),
        ("Setelah APBN 2031 direvisi, berapa subsidi pupuk tahun 2029?", BudgetAsk(2031, REVISED)),
        ("Berapa hibah untuk Tahun Anggaran 2031 setelah APBN diubah?", BudgetAsk(2031, REVISED)),
        (
            "Berapa realisasi belanja modal menurut UU pertanggungjawaban APBN 2031?",
            BudgetAsk(2031, ACCOUNTABILITY),
        ),
        ("How much grant spending did the revised 2031 budget expect?", BudgetAsk(2031, REVISED)),
        ("How large were grants in the 2031 state budget when first enacted?", BudgetAsk(2031, ORIGINAL)),
        ("Berapa pembiayaan defisit pada Tahun Anggaran 2031?", BudgetAsk(2031, ORIGINAL)),
        ("Berapa hibah dalam APBN 2031 sebelum perubahan?", BudgetAsk(2031, ORIGINAL)),
        ("How much were grants in the 2031 budget before it was revised?", BudgetAsk(2031, ORIGINAL)),
        ("Berapa belanja hibah Dinas Pertanian dalam APBA 2031?", None),
        ("What is the total 2031 regional budget (APBD) of some province?", None),
        ("How much did Aceh's 2031 budget give the farm office?", None),
        ("Apa definisi petani menurut undang-undang tahun 2031?", None),
        ("Berapa belanja dalam APBN 2030 dan APBN 2031?", None),
    ],
)
def test_budget_ask(question: str, ask: BudgetAsk | None) -> None:
    assert budget_ask(question) == ask


def test_tiers_rank_the_asked_kind_above_the_same_year() -> None:
    laws = BudgetLaws(
        {
            "a": _title("UNDANG-UNDANG NOMOR 7 TAHUN 2030 TENTANG", "2031"),
            "b": _title(_AMENDS, "2031"),
            "c": _title("UNDANG-UNDANG NOMOR 8 TAHUN 2031 TENTANG", "2032"),
            "d": "UNDANG-UNDANG NOMOR 2 TAHUN 2031 TENTANG PERIKANAN",
        }
    )
    assert len(laws) == 3
    assert laws.tiers("Berapa hibah dalam APBN-P 2031?") == {"a": 1, "b": 2}
    assert laws.tiers("Berapa hibah dalam APBN 2031?") == {"a": 2, "b": 1}
    # the law enacted in 2031 is the budget of 2032, never an answer for fiscal year 2031
    assert "c" not in laws.tiers("Berapa hibah dalam APBN 2031?")
    assert laws.tiers("Berapa hibah dalam APBN 2040?") == {}
    assert laws.tiers("Berapa hibah dalam APBA 2031?") == {}


def _law(number: int, enacted: int, fiscal: int, revised: bool, grant: str) -> str:
    about = APBN + " TAHUN ANGGARAN " + str(fiscal)
    if revised:
        about = f"PERUBAHAN ATAS UNDANG-UNDANG NOMOR 1 TAHUN {fiscal - 1} TENTANG {about}"
    return (
        f"UNDANG-UNDANG REPUBLIK INDONESIA NOMOR {number} TAHUN {enacted} TENTANG {about}\n"
        "DENGAN RAHMAT TUHAN YANG MAHA ESA\nMEMUTUSKAN:\nPasal 1\n"
        f"Anggaran belanja hibah negara tahun anggaran {fiscal} diperkirakan sebesar Rp{grant},00.\n"
        "Pasal 2\nBelanja hibah negara dipakai untuk pembangunan lumbung pangan desa.\n"
    )


@pytest.fixture
def budget_retriever(tmp_path: Path) -> Retriever:
    corpus = tmp_path / "corpus"
    (corpus / "uu").mkdir(parents=True)
    laws = {
        "uu/2040_1.md": _law(1, 2040, 2041, False, "10.000.000"),
        "uu/2041_2.md": _law(2, 2041, 2041, True, "12.000.000"),
        "uu/2041_3.md": _law(3, 2041, 2042, False, "14.000.000"),
        "uu/2042_4.md": _law(4, 2042, 2043, False, "16.000.000"),
    }
    for name, text in laws.items():
        (corpus / name).write_text(text, encoding="utf-8")
    encoder = HashingEncoder(dim=128)
    report = ingest([corpus], tmp_path / "index", encoder=encoder, progress=False)
    assert not report.failed, report.summary()
    return Retriever.load(tmp_path / "index", encoder=encoder, reranker=FeatureReranker())


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("Berapa belanja hibah negara dalam APBN 2042?", "2041_3.md"),
        ("Berapa belanja hibah negara dalam APBN-P 2041?", "2041_2.md"),
        ("Berapa belanja hibah negara tahun anggaran 2041?", "2040_1.md"),
        ("How much state grant spending did the revised 2041 budget expect?", "2041_2.md"),
    ],
)
def test_the_asked_fiscal_year_law_ranks_first(
    budget_retriever: Retriever, question: str, source: str
) -> None:
    hits = budget_retriever.search(question, top_k=5)
    assert hits and hits[0].chunk.source.endswith(source), [h.chunk.source for h in hits]


def test_a_heading_after_the_recitals_titles_the_document() -> None:
    opening = (
        "Menimbang :\n\na. UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 8 TAHUN 2O31 TENTANG "
        + APBN
        + " TAHUN ANGGARAN 2032\nDENGAN RAHMAT TUHAN YANG MAHA ESA bahwa anggaran disusun"
    )
    fixed = with_opening_title(DocumentIdentity(title="8", doc_type="UU", number="8", year=2031), opening)
    assert law_of_title(fixed.title) == BudgetLaw(2032, ORIGINAL)
    named = DocumentIdentity(title="UNDANG-UNDANG NOMOR 2 TAHUN 2031 TENTANG PERIKANAN", doc_type="UU")
    assert with_opening_title(named, opening) == named  # a title that names its regulation is kept
