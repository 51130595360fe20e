"""A question for a figure is answered by the provision that states it (issue 19): the search tool also reads
the statements of its leading documents, title words do not drown the statement's own words, wrapped lines
are read as one provision, a figure question is never a cross-reference lookup, and a place alone answers
nothing. The documents here are fictional."""

from __future__ import annotations

import asyncio

from retrieval.types import Chunk
from serve_app.agent.planner import Planner
from serve_app.agent.query import statement_query
from serve_app.agent.tools.base import ToolContext
from serve_app.agent.tools.search import SearchTool
from serve_app.agent.writers.embedded import EmbeddedWriter
from serve_app.agent.writers.units import extract_units, unwrap_lines
from serve_app.answer.refusals import NOT_FOUND_FRAMING
from serve_app.answer.segments import Passage
from tests.support.agents import FakeRetriever, fake_find_references, make_chunk, port_of

TITLE = "Undang-Undang Nomor 9 Tahun 2030 tentang Anggaran Pendapatan dan Belanja Negara Tahun Anggaran 2031"


def law_chunk(ordinal: int, text: str, pasal: str) -> Chunk:
    return make_chunk(
        "apbn-2031", ordinal, text, title=TITLE, doc_type="UU", number="9", year=2030,
        section=("Memutuskan", f"Pasal {pasal}"),
    )


# Many provisions repeat the question's words; one states the amount.
REPEATING = [
    law_chunk(
        i,
        f"Pasal {20 + i}\n(1) Dalam hal target anggaran pendapatan negara dalam APBN Tahun Anggaran 2031 "
        f"tidak tercapai, Pemerintah melaporkan target anggaran itu kepada DPR ({i}).",
        str(20 + i),
    )
    for i in range(6)
]
STATING = law_chunk(
    9, "Pasal 3\nAnggaran Pendapatan Negara Tahun Anggaran 2031 direncanakan sebesar Rp3.141.592.653.000,00 "
    "(tiga kuadriliun seratus empat puluh satu triliun lima ratus sembilan puluh dua miliar enam ratus lima "
    "puluh tiga juta rupiah).", "3",
)
QUESTION = "Berapa target anggaran pendapatan negara dalam APBN 2031 (UU 9/2030)?"


def test_the_statement_query_keeps_the_asked_thing_the_law_and_how_amounts_are_stated() -> None:
    query = statement_query(QUESTION)
    assert query is not None
    assert query.startswith("UU 9/2030") and "pendapatan" in query and "2031" in query
    assert query.endswith("sebesar") and "berapa" not in query
    assert statement_query("Apa yang dimaksud dengan pendapatan negara?") is None


def test_search_adds_the_provision_that_states_the_amount_after_the_first_list() -> None:
    retriever = FakeRetriever([*REPEATING, STATING])
    ctx = ToolContext(retriever=port_of(retriever), query=QUESTION, document_ids=None, top_k=4)
    result = asyncio.run(SearchTool().run({"query": QUESTION, "top_k": 4}, ctx))
    texts = [e.text for e in result.evidence]
    assert STATING.text not in texts[:4]  # the question's own words rank the repeating provisions first
    assert texts[-1] == STATING.text and len(texts) <= 4 + 2
    assert retriever.calls.count("search") == 2


def test_a_question_for_no_figure_searches_once() -> None:
    retriever = FakeRetriever([*REPEATING, STATING])
    query = "Kepada siapa Pemerintah melaporkan bila target tidak tercapai?"
    ctx = ToolContext(retriever=port_of(retriever), query=query, document_ids=None, top_k=4)
    asyncio.run(SearchTool().run({"query": query, "top_k": 4}, ctx))
    assert retriever.calls.count("search") == 1


def test_title_words_do_not_drown_the_statement_of_the_amount() -> None:
    passages = [Passage(f"P{i + 1}", c.text, chunk=c) for i, c in enumerate([*REPEATING, STATING])]
    segments = EmbeddedWriter().segments(QUESTION, passages)
    facts = [s.text for s in segments if s.kind == "fact"]
    assert facts and "Rp3.141.592.653.000,00" in facts[0], facts


def test_wrapped_lines_are_one_provision_and_headings_rows_and_new_provisions_stay_apart() -> None:
    text = (
        "Pasal 8\n(1) Paling sedikit 35% (tiga puluh lima persen) dana sebagaimana dimaksud dalam\n"
        "Pasal 6 ayat (2) dialokasikan untuk irigasi, dan\n"
        "paling sedikit 10% (sepuluh persen) untuk jalan desa.\n"
        "(2) Ketentuan lebih lanjut diatur dengan\nPeraturan Pemerintah.\n| a | b |"
    )
    assert unwrap_lines(text) == [
        "Pasal 8",
        "(1) Paling sedikit 35% (tiga puluh lima persen) dana sebagaimana dimaksud dalam Pasal 6 ayat (2) "
        "dialokasikan untuk irigasi, dan paling sedikit 10% (sepuluh persen) untuk jalan desa.",
        "(2) Ketentuan lebih lanjut diatur dengan Peraturan Pemerintah.",
        "| a | b |",
    ]
    chunk = make_chunk("uu-dana", 0, text, title="Undang-Undang tentang Dana Desa")
    units = extract_units([Passage("P1", text, chunk=chunk)])
    assert not any(u.text.endswith("dimaksud dalam") for u in units)


def test_a_figure_question_naming_an_amending_law_is_searched_not_cross_referenced() -> None:
    planner = Planner(available={"search", "cross_reference"}, find_references=fake_find_references)
    figure = planner.plan("Berapa anggaran belanja negara 2031 setelah perubahan APBN (UU 9/2030)?")
    assert figure.intent == "search"
    relation = planner.plan("Apa yang mengubah UU 9/2030?")
    assert relation.intent == "cross_reference"


def test_a_statement_that_only_names_the_asked_place_answers_nothing() -> None:
    chunk = make_chunk(
        "qanun-x", 0, "Ditetapkan di Kota Lamno pada tanggal 3 Maret 2031 oleh Gubernur.",
        title="Qanun Kota Lamno tentang Pasar",
    )
    segments = EmbeddedWriter().segments(
        "What was the unemployment rate in Kota Lamno in 2031?", [Passage("P1", chunk.text, chunk=chunk)]
    )
    assert [s.kind for s in segments] == ["framing"] and segments[0].text != NOT_FOUND_FRAMING
