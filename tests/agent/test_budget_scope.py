"""A question that asks for one state-budget law by its fiscal year is answered from that law only: the same
line of a neighbouring year's law, of the budget as first enacted, or of a regional table is refused as not
found, never written as the answer. Invented laws, years and figures."""

from __future__ import annotations

from serve_app.agent.writers.budget_scope import answering_passages, asked_law
from serve_app.agent.writers.embedded import EmbeddedWriter
from serve_app.answer.refusals import NOT_FOUND_FRAMING, framing_in
from serve_app.answer.segments import Passage
from tests.support.agents import make_chunk

APBN = "Anggaran Pendapatan dan Belanja Negara Tahun Anggaran"
ORIGINAL_2041 = f"Undang-Undang Nomor 6 Tahun 2040 tentang {APBN} 2041"
AMENDS = "Undang-Undang Nomor 2 Tahun 2041 tentang Perubahan atas Undang-Undang Nomor 6 Tahun 2040"
REVISED_2041 = f"{AMENDS} tentang {APBN} 2041"
ORIGINAL_2042 = f"Undang-Undang Nomor 7 Tahun 2041 tentang {APBN} 2042"


def _passage(key: str, doc: str, title: str, figure: str) -> Passage:
    text = f"Pasal 9\n\nAnggaran belanja hibah negara diperkirakan sebesar Rp{figure},00."
    return Passage(key, text, chunk=make_chunk(doc, 9, text, title=title, doc_type="UU"))


def _facts(query: str, passages: list[Passage]) -> list[str]:
    segments = EmbeddedWriter().segments(query, passages)
    return [s.text for s in segments if s.kind == "fact"]


def test_the_asked_law_answers_and_its_neighbours_do_not() -> None:
    shown = [
        _passage("P1", "apbn-2042", ORIGINAL_2042, "30.000.000"),
        _passage("P2", "apbn-2041", ORIGINAL_2041, "10.000.000"),
        _passage("P3", "apbn-p-2041", REVISED_2041, "12.000.000"),
    ]
    revised = _facts("Berapa belanja hibah negara dalam APBN-P 2041?", shown)
    assert revised and all("12.000.000" in f for f in revised)
    original = _facts("Berapa belanja hibah negara dalam APBN 2041?", shown)
    assert original and all("10.000.000" in f for f in original)
    english = _facts("How much state grant spending did the revised 2041 budget expect?", shown)
    assert english and all("12.000.000" in f for f in english)


def test_only_another_years_law_is_refused_not_found() -> None:
    shown = [
        _passage("P1", "apbn-2042", ORIGINAL_2042, "30.000.000"),
        _passage("P2", "apbn-2041", ORIGINAL_2041, "10.000.000"),
    ]
    query = "Berapa belanja hibah negara dalam APBN Perubahan 2041?"  # the index holds no revision of 2041
    segments = EmbeddedWriter().segments(query, shown)
    assert not [s for s in segments if s.kind == "fact"]
    assert segments[-1].text == framing_in(NOT_FOUND_FRAMING, False)
    assert not _facts("Berapa belanja hibah negara dalam APBN 2043?", shown)


def test_questions_that_ask_for_no_single_budget_law_keep_every_passage() -> None:
    shown = [_passage("P1", "apbn-2042", ORIGINAL_2042, "30.000.000")]
    assert asked_law("Berapa belanja hibah menurut UU Nomor 7 Tahun 2041?") is None  # the named law decides
    for query in (
        "Berapa belanja hibah menurut UU Nomor 7 Tahun 2041?",
        "Berapa belanja hibah negara?",
        "Berapa belanja hibah dalam APBA 2042?",
    ):
        assert answering_passages(query, shown) == shown
    row = make_chunk("apba", 3, "| Belanja Hibah | 5000000 |", title="Rincian APBA", kind="table")
    table = [Passage("P2", row.text, chunk=row)]
    # a fiscal year without "APBN": a regional document stays, another year's APBN law does not
    mixed = [*shown, *table, _passage("P3", "apbn-2041", ORIGINAL_2041, "10.000.000")]
    assert answering_passages("Berapa anggaran belanja hibah tahun 2042?", mixed) == [*shown, *table]


def test_a_regulation_named_by_number_is_the_scope() -> None:
    def law(key: str, number: str, year: int, figure: str) -> Passage:
        text = f"Pasal 9\n\nAnggaran belanja hibah negara diperkirakan sebesar Rp{figure},00."
        title = f"Undang-Undang Nomor {number} Tahun {year} tentang {APBN} {year + 1}"
        chunk = make_chunk(
            f"uu-{number}-{year}", 9, text, title=title, doc_type="UU", number=number, year=year
        )
        return Passage(key, text, chunk=chunk)

    shown = [law("P1", "6", 2040, "10.000.000"), law("P2", "7", 2041, "30.000.000")]
    facts = _facts("Menurut UU Nomor 7 Tahun 2041, berapa belanja hibah negara?", shown)
    assert facts and all("30.000.000" in f for f in facts)
    # the named law was not retrieved: the writer reads what was
    assert answering_passages("Menurut UU Nomor 9 Tahun 2041, berapa belanja hibah negara?", shown) == shown
