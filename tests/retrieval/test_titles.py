from __future__ import annotations

from retrieval.text import IndonesianAnalyzer
from retrieval.titles import TitleIndex, build_title_index, title_query

TITLES = {
    "apbn-2015": "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 27 TAHUN 2014 TENTANG ANGGARAN PENDAPATAN DAN "
    "BELANJA NEGARA TAHUN ANGGARAN 2015",
    "apbn-2016": "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 14 TAHUN 2015 TENTANG ANGGARAN PENDAPATAN DAN "
    "BELANJA NEGARA TAHUN ANGGARAN 2016",
    "konsumen": "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 8 TAHUN 1999 TENTANG PERLINDUNGAN KONSUMEN",
    "desa": "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 6 TAHUN 2014 TENTANG DESA",
    "pemda": "UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 23 TAHUN 2014 TENTANG PEMERINTAHAN DAERAH",
    "pp": "PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 12 TAHUN 2019 TENTANG PENGELOLAAN KEUANGAN DAERAH",
}


def _index() -> tuple[TitleIndex, IndonesianAnalyzer]:
    analyze = IndonesianAnalyzer()
    return build_title_index(TITLES, analyze), analyze


def test_a_statute_named_by_its_subject() -> None:
    index, analyze = _index()
    named = index.named(analyze("Apa hak konsumen menurut UU Perlindungan Konsumen?"))
    assert [d for d, _ in named] == ["konsumen"]


def test_a_budget_law_named_by_its_fiscal_year_through_the_abbreviation() -> None:
    index, analyze = _index()
    query = title_query("Berapa defisit dalam APBN 2016?")
    assert "anggaran pendapatan dan belanja negara" in query
    named = index.named(analyze(query))
    # the fiscal year tells the two budget laws apart; the law numbered in that year ranks below it
    assert named[0][0] == "apbn-2016"
    assert "apbn-2015" not in [d for d, _ in named]


def test_words_every_title_holds_name_nothing() -> None:
    index, analyze = _index()
    assert index.weight(analyze("undang-undang")[0]) < index.weight(analyze("konsumen")[0])
    assert index.named(analyze("Undang-Undang Republik Indonesia tahun berapa?")) == []
    assert index.named(analyze("Berapa upah minimum pekerja?")) == []
