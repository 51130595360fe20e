"""Regression tests for the embedded agent's answer quality (demo-corpus findings): what the planner sends
to table_query, table rows written as tables, each list lead-in once with its whole list, the asked period
and article, names the corpus lacks, English questions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from serve_app.agent.planner import Planner
from serve_app.agent.query import analyse, search_query
from serve_app.agent.tools.base import ToolContext
from serve_app.agent.tools.table import TableQueryTool, detect_operation
from serve_app.agent.writers.embedded import EmbeddedWriter, extract_units, score_units
from serve_app.answer.compose import compose, validate_segments
from serve_app.answer.refusals import NOT_FOUND_FRAMING
from serve_app.answer.segments import Passage, Segment
from tests.support.agents import FakeRetriever, FakeTable, fake_find_references, make_chunk, port_of

APBA_2023 = "Qanun Aceh Nomor 1 Tahun 2023 tentang Anggaran Pendapatan dan Belanja Aceh Tahun Anggaran 2023"
APBA_2024 = "Qanun Aceh Nomor 1 Tahun 2024 tentang Anggaran Pendapatan dan Belanja Aceh Tahun Anggaran 2024"
PENDIDIKAN = "Qanun Aceh Nomor 9 Tahun 2022 tentang Penyelenggaraan Pendidikan"

BELANJA_2023 = """Pasal 5

(1) Belanja Aceh Tahun Anggaran 2023 ditetapkan sebesar Rp4.338.210.745.602.

(2) Belanja sebagaimana dimaksud pada ayat (1) dirinci menurut urusan pemerintahan sebagai berikut:

| Urusan | Anggaran (Rp) |
| --- | --- |
| Pendidikan | Rp871.667.219.294 |
| Kesehatan | Rp612.384.905.118 |
| Jumlah Belanja | Rp4.338.210.745.602 |"""

PASAL_6_2023 = """Pasal 6

(1) Belanja urusan pendidikan ditetapkan sebesar Rp871.667.219.294.

(2) Belanja sebagaimana dimaksud pada ayat (1) setara dengan 20,1 persen dari total belanja."""

PASAL_6_2024 = (
    "Pasal 6\n\n(1) Belanja urusan pendidikan ditetapkan sebesar Rp934.512.880.150.\n\n"
    "(3) Belanja urusan pendidikan Tahun Anggaran 2024 naik sebesar Rp62.845.660.856 atau 7,21 persen "
    "dibandingkan dengan Tahun Anggaran 2023 sebesar Rp871.667.219.294."
)

SANKSI = """Pasal 11

Satuan pendidikan yang melanggar ketentuan Pasal 5 ayat (3) dikenai sanksi administratif berupa:
a. teguran lisan;
b. teguran tertulis;
c. penghentian sementara bantuan keuangan; dan/atau
d. pencabutan izin penyelenggaraan."""

WAJIB_BELAJAR = (
    "Pasal 5\n\n(1) Pemerintah Aceh bertanggung jawab atas penyelenggaraan pendidikan menengah.\n\n"
    "(2) Wajib belajar di Aceh berlaku bagi setiap anak berusia 7 (tujuh) tahun sampai dengan 18 (delapan "
    "belas) tahun.\n\n(3) Pemerintah Aceh menjamin terselenggaranya wajib belajar sebagaimana dimaksud pada "
    "ayat (2) tanpa memungut biaya."
)


def chunk(doc: str, ordinal: int, text: str, title: str, pasal: str, **kw: Any) -> Any:
    number, year = ("9", 2022) if title == PENDIDIKAN else ("1", int(title.split("Tahun ")[1][:4]))
    return make_chunk(
        doc, ordinal, text, title=title, doc_type="Qanun", number=number, year=year,
        section=("BAB III", f"Pasal {pasal}"), **kw,
    )


def passages() -> list[Passage]:
    chunks = [
        chunk("apba-2024", 6, PASAL_6_2024, APBA_2024, "6"),
        chunk("apba-2023", 5, BELANJA_2023, APBA_2023, "5"),
        chunk("apba-2023", 6, PASAL_6_2023, APBA_2023, "6"),
        chunk("pendidikan", 11, SANKSI, PENDIDIKAN, "11"),
        chunk("pendidikan", 5, WAJIB_BELAJAR, PENDIDIKAN, "5"),
    ]
    return [Passage(f"P{i}", c.text, chunk=c) for i, c in enumerate(chunks, 1)]


def answer(query: str, shown: list[Passage] | None = None) -> list[Segment]:
    segments = EmbeddedWriter().segments(query, shown if shown is not None else passages())
    assert not validate_segments(segments)
    return segments


def facts(segments: list[Segment]) -> list[Segment]:
    return [s for s in segments if s.kind == "fact"]


# ---------------------------------------------------------------- 1. what goes to table_query


PLANNER = Planner(available={"search", "legal_check", "table_query"}, find_references=fake_find_references)


@pytest.mark.parametrize(
    ("query", "tools"),
    [
        ("Berapa persen belanja pendidikan dari total belanja APBA 2023?", ["search"]),
        ("Berapa persen kenaikan belanja pendidikan 2024 dibandingkan tahun 2023?", ["search"]),
        ("Sebutkan semua asas penyelenggaraan pendidikan di Aceh.", ["search"]),
        ("Berapa total pagu program pendidikan dalam lampiran APBA 2023?", ["table_query", "search"]),
        ("Berapa jumlah pagu seluruh program kesehatan?", ["table_query", "search"]),
        ("5 program dengan pagu terbesar", ["table_query"]),
    ],
)
def test_table_query_only_for_aggregates_a_table_computes(query: str, tools: list[str]) -> None:
    assert [c.tool for c in PLANNER.plan(query).calls] == tools


def test_a_share_is_never_a_sum() -> None:
    assert detect_operation("Berapa persen belanja pendidikan dari total belanja?") == "sum"
    assert PLANNER.plan("Berapa persen belanja pendidikan dari total belanja?").intent == "search"
    assert detect_operation("Sebutkan semua sanksi") is None


LAMPIRAN = FakeTable(
    columns=["kode_rekening", "kelompok", "uraian", "pagu_2023", "realisasi_2023"],
    rows=[
        ("lamp-c0", ["1.01.02", "Belanja", "Program Pengelolaan Pendidikan", "540433676774", "516127345944"]),
        ("lamp-c0", ["1.01.03", "Belanja", "Program Pengembangan Kurikulum", "78450050811", "72108446540"]),
        ("lamp-c0", ["1.02.02", "Belanja", "Program Upaya Kesehatan", "434793283474", "404017877231"]),
    ],
)


def run_table(query: str) -> Any:
    header = "kode_rekening | kelompok | uraian | pagu_2023 | realisasi_2023"
    rows = "\n".join(" | ".join(cells) for _, cells in LAMPIRAN.rows)
    lamp = make_chunk("lamp", 0, rows, title="lampiran_apba_2023", doc_type="Dataset", context=header,
                      kind="table")
    retriever = FakeRetriever([lamp], tables={"lamp": LAMPIRAN})
    ctx = ToolContext(port_of(retriever), query, None)
    return asyncio.run(TableQueryTool().run({"query": query}, ctx))


def test_table_query_sums_the_plan_column_for_a_budget() -> None:
    result = run_table("Berapa total anggaran program pendidikan 2023?")
    assert result.status == "ok"
    assert result.evidence[0].text.startswith("Jumlah pagu_2023 dari 1 baris")  # "anggaran" is the pagu


@pytest.mark.parametrize(
    "query",
    [
        "Berapa total anggaran program pendidikan 2024?",  # a year the table does not cover
        "Berapa total anggaran program perikanan?",  # an asked word no row uses
        "Program apa yang persentase realisasinya paling rendah?",  # no percentage column
    ],
)
def test_table_query_refuses_what_its_table_cannot_answer(query: str) -> None:
    assert run_table(query).status == "empty"


# ---------------------------------------------------------------- 2. table rows as tables


def test_markdown_table_rows_are_written_as_a_table_never_as_list_items() -> None:
    segments = answer("Berapa anggaran urusan kesehatan tahun 2023?")
    assert all(not s.text.lstrip().startswith("|") for s in segments)
    layouts = [(s.layout, s.kind) for s in segments[1:3]]
    assert layouts == [("table_header", "framing"), ("table_row", "fact")]
    assert segments[1].text == "Urusan | Anggaran (Rp)"
    assert segments[2].text == "Kesehatan | Rp612.384.905.118" and segments[2].cites == ("P2",)
    assert "| Kesehatan | Rp612.384.905.118 |" in compose(segments).answer


def test_a_pipe_row_without_a_header_is_no_unit() -> None:
    rows = "| Kesehatan | Rp612.384.905.118 |\n| Sosial | Rp156.208.331.975 |"
    orphan = make_chunk("x", 3, rows, title="X")
    segments = answer("Berapa anggaran kesehatan?", [Passage("P1", orphan.text, chunk=orphan)])
    assert [s.text for s in segments] == [NOT_FOUND_FRAMING]


def test_a_continued_table_takes_its_header_from_the_context() -> None:
    rest = make_chunk("x", 4, "| Sosial | Rp156.208.331.975 |", title=APBA_2023, kind="table",
                      context="BAB III BELANJA\n| Urusan | Anggaran (Rp) |\n| --- | --- |")
    segments = answer("Berapa anggaran urusan sosial?", [Passage("P1", rest.text, chunk=rest)])
    assert [(s.layout, s.text) for s in segments[1:]] == [
        ("table_header", "Urusan | Anggaran (Rp)"),
        ("table_row", "Sosial | Rp156.208.331.975"),
    ]


# ---------------------------------------------------------------- 3. each lead-in once, with its list


def test_a_list_question_gets_its_lead_in_once_and_every_item() -> None:
    segments = answer("Apa saja sanksi administratif dalam Pasal 11 Qanun Aceh Nomor 9 Tahun 2022?")
    lead = "Satuan pendidikan yang melanggar ketentuan Pasal 5 ayat (3) dikenai sanksi administratif berupa:"
    assert [s.text for s in segments].count(lead) == 1
    assert [(s.layout, s.text) for s in facts(segments)] == [
        ("paragraph", lead),
        ("list_item", "teguran lisan"),
        ("list_item", "teguran tertulis"),
        ("list_item", "penghentian sementara bantuan keuangan"),
        ("list_item", "pencabutan izin penyelenggaraan."),
    ]
    spans = compose(segments).spans
    assert all(span.context == lead for span in spans if span.segment.layout == "list_item")


# ---------------------------------------------------------------- 4. the asked period and article


def test_the_asked_year_prefers_that_years_budget_over_a_mention_in_passing() -> None:
    shown = facts(answer("Berapa anggaran pendidikan Aceh tahun 2023?"))
    assert shown[0].text == "Pendidikan | Rp871.667.219.294" and shown[0].layout == "table_row"
    assert all("Tahun Anggaran 2024" not in s.text for s in shown)
    assert all("Rp934.512.880.150" not in s.text for s in shown)
    shown_2024 = facts(answer("Berapa anggaran pendidikan Aceh tahun 2024?"))
    assert shown_2024[0].text == "(1) Belanja urusan pendidikan ditetapkan sebesar Rp934.512.880.150."


def test_a_total_stated_for_the_asked_year_is_the_answer() -> None:
    shown = facts(answer("Berapa total Belanja Aceh Tahun Anggaran 2023?"))
    assert "Rp4.338.210.745.602" in shown[0].text


def test_a_year_no_passage_speaks_of_is_not_found() -> None:
    assert [s.text for s in answer("Berapa anggaran pendidikan Aceh tahun 2021?")] == [NOT_FOUND_FRAMING]


def test_the_named_ayat_is_the_answer() -> None:
    shown = facts(answer("Apa isi Pasal 5 ayat (2) Qanun Aceh Nomor 9 Tahun 2022?"))
    assert shown[0].text.startswith("(2) Wajib belajar di Aceh berlaku")


def test_a_share_question_is_answered_by_the_stated_share() -> None:
    shown = facts(answer("Berapa persen belanja pendidikan dari total belanja APBA 2023?"))
    assert shown[0].text.startswith("(2) Belanja sebagaimana dimaksud pada ayat (1) setara dengan 20,1")


# ---------------------------------------------------------------- 5. names, documents, English


def test_a_place_no_passage_names_is_not_found() -> None:
    stats = make_chunk(
        "miskin", 0, "Jumlah penduduk miskin Aceh pada Maret 2023 sebanyak 806.250 jiwa.",
        title="Statistik Kemiskinan Aceh 2022-2023",
    )
    shown = [Passage("P1", stats.text, chunk=stats)]
    asked = "Berapa jumlah penduduk miskin di Kabupaten Simeulue tahun 2023?"
    assert [s.text for s in answer(asked, shown)] == [NOT_FOUND_FRAMING]
    assert "806.250" in facts(answer("Berapa jumlah penduduk miskin Aceh tahun 2023?", shown))[0].text


def test_the_document_named_after_menurut_comes_first() -> None:
    rule = chunk("pendidikan", 7, "(1) Pemerintah Aceh mengalokasikan anggaran pendidikan paling sedikit 20 "
                 "(dua puluh) persen dari total belanja APBA.", PENDIDIKAN, "7")
    stated = (
        "(2) Belanja pendidikan setara dengan 20,4 persen dari total belanja, sesuai ketentuan paling "
        "sedikit 20 (dua puluh) persen dalam Qanun Aceh Nomor 9 Tahun 2022 tentang Penyelenggaraan "
        "Pendidikan."
    )
    cited = chunk("apba-2024", 7, stated, APBA_2024, "6")
    shown = [Passage("P1", cited.text, chunk=cited), Passage("P2", rule.text, chunk=rule)]
    asked = "Berapa persen minimal anggaran pendidikan menurut Qanun Penyelenggaraan Pendidikan?"
    assert facts(answer(asked, shown))[0].cites == ("P2",)


def test_english_questions_find_indonesian_words() -> None:
    # general public-finance terms come from the bilingual lexicon (language/)
    assert {"belanja", "modal"} <= set(search_query("How much is the capital expenditure in 2024?").split())
    assert search_query("Berapa belanja modal 2024?") == "Berapa belanja modal 2024?"
    table = make_chunk(
        "belanja", 7, "Pasal 7\n\nBelanja daerah dirinci menurut jenis belanja sebagai berikut:\n\n"
        "| Jenis belanja | Jumlah |\n| --- | --- |\n| Belanja Modal | Rp1.750.000.000 |\n"
        "| Belanja Pegawai | Rp1.600.000.000 |",
        title="Qanun Aceh Nomor 3 Tahun 2022 tentang Anggaran Pendapatan dan Belanja Aceh",
    )
    segments = answer(
        "How much is the capital expenditure under the Aceh budget qanun?",
        [Passage("P1", table.text, chunk=table)],
    )
    assert [s.text for s in facts(segments)] == ["Belanja Modal | Rp1.750.000.000"]


def test_question_analysis_reads_article_years_and_acronyms() -> None:
    q = analyse("Berapa rasio pendidik pada SMA menurut Pasal 6 ayat (1) Qanun Aceh Nomor 9 Tahun 2022?")
    assert (q.pasal, q.ayat, q.years, q.named_ref) == ("6", "1", [], ("9", 2022))
    assert any(t.raw == "sma" and t.acronym for t in q.terms)
    assert analyse("Apa saja sanksi administratif?").asks_list


# ---------------------------------------------------------------- 6. definitions and conversational frames

# An invented qanun's definitions article and two provisions that only use the defined term.
RUMAH_ADAT = "Qanun Aceh Nomor 4 Tahun 2021 tentang Pelestarian Rumah Adat"
DEFINITIONS = (
    "Pasal 1\n\nDalam Qanun ini yang dimaksud dengan:\n1. Pelestarian Rumah Adat adalah upaya menjaga "
    "keberadaan rumah adat beserta nilainya.\n2. Rumah Adat adalah bangunan tempat tinggal tradisional yang "
    "didirikan menurut kaidah adat setempat.\n3. Pemilik Rumah Adat adalah orang yang menguasai Rumah Adat "
    "secara sah."
)
USES = (
    "Pasal 9\n\n(1) Pemilik Rumah Adat wajib merawat Rumah Adat miliknya.\n\n(2) Pemerintah Aceh membantu "
    "perawatan Rumah Adat yang rusak berat."
)


def _rumah_adat() -> list[Passage]:
    out = []
    for i, (text, pasal) in enumerate(((USES, "9"), (DEFINITIONS, "1")), 1):
        c = make_chunk("rumah-adat", i, text, title=RUMAH_ADAT, doc_type="Qanun", number="4", year=2021,
                       section=("BAB I", f"Pasal {pasal}"))
        out.append(Passage(f"P{i}", c.text, chunk=c))
    return out


@pytest.mark.parametrize(
    "query",
    [
        "Apa definisi Rumah Adat menurut Qanun Pelestarian Rumah Adat?",
        "Apa pengertian Rumah Adat?",
        "What is the definition of Rumah Adat under the qanun on Pelestarian Rumah Adat?",
    ],
)
def test_a_definition_question_is_answered_by_the_sentence_defining_that_term(query: str) -> None:
    shown = facts(answer(query, _rumah_adat()))
    assert any(s.text.startswith("Rumah Adat adalah bangunan") for s in shown), shown
    # the longer terms that hold it, and the provisions that only use it, are not the answer
    assert not any(s.text.startswith(("Pelestarian Rumah Adat adalah", "(1) Pemilik")) for s in shown)


def test_definition_and_conversational_frame_words_are_not_asked_words() -> None:
    q = analyse("Apa definisi Rumah Adat menurut Qanun Pelestarian Rumah Adat?")
    assert q.asks_definition and [t.raw for t in q.terms] == ["rumah", "adat", "pelestarian"]
    assert q.named_only == frozenset({"pelestarian"})  # only the document's title says it
    q = analyse("Kami ingin tahu pagu belanja modal Aceh 2024, angkanya berapa?")
    assert [t.raw for t in q.terms] == ["pagu", "belanja", "modal", "aceh"] and not q.asks_definition
    assert [t.raw for t in analyse("Could you tell me the capital expenditure in 2024?").terms] == [
        "capital",
        "expenditure",
    ]


def _qanun_passage(doc: str, text: str, title: str, number: str, year: int, pasal: str) -> list[Passage]:
    c = make_chunk(doc, 1, text, title=title, doc_type="Qanun", number=number, year=year,
                   section=("BAB II", f"Pasal {pasal}"))
    return [Passage("P1", c.text, chunk=c)]


def test_the_named_documents_title_words_need_not_be_repeated_by_its_statements() -> None:
    # An invented regional budget law: its statements never repeat the acronym the question names it by,
    # and state the asked target as what is "direncanakan".
    title = "Qanun Kabupaten Contoh Nomor 2 Tahun 2030 tentang Anggaran Pendapatan dan Belanja Kabupaten 2031"
    text = (
        "Pasal 3\n\n(1) Pendapatan Retribusi Daerah direncanakan sebesar Rp12.400.000.000,00 (dua belas "
        "miliar empat ratus juta rupiah).\n\n(2) Pendapatan Pajak Daerah direncanakan sebesar "
        "Rp30.100.000.000,00 (tiga puluh miliar seratus juta rupiah)."
    )
    shown_passages = _qanun_passage("apbk", text, title, "2", 2030, "3")
    asked = "Kami ingin tahu target pendapatan retribusi pada APBK 2031 (Qanun 2/2030), angkanya berapa?"
    shown = facts(answer(asked, shown_passages))
    assert shown and shown[0].text.startswith("(1) Pendapatan Retribusi Daerah direncanakan sebesar Rp12.400")
    # every asked word is said: three by the statement, "APBK" by the title of the document the question names
    units = extract_units(shown_passages)
    score_units("Berapa target pendapatan retribusi pada APBK (Qanun 2/2030)?", units)
    (retribusi,) = [u for u in units if "Retribusi Daerah direncanakan" in u.text]
    assert retribusi.coverage == pytest.approx(1.0)


def test_an_english_question_with_a_named_law_reads_past_its_comma() -> None:
    # Invented provisions: the English words (annual leave, employee, days) reach them through the lexicon.
    title = "Qanun Aceh Nomor 6 Tahun 2029 tentang Ketenagakerjaan Contoh"
    text = (
        "Pasal 12\n\n(1) Setiap pekerja berhak atas cuti tahunan paling sedikit 14 (empat belas) hari kerja "
        "setelah bekerja selama 12 (dua belas) bulan.\n\n(2) Pengusaha wajib membayar upah penuh selama "
        "cuti sebagaimana dimaksud pada ayat (1)."
    )
    asked = "Under the employment qanun (Qanun 6/2029), an employee gets how many annual leave days?"
    q = analyse(asked)
    assert [t.raw for t in q.named_words] == ["employment"]  # the clause ends at its comma
    assert not {"gets", "how", "many"} & {t.raw for t in q.terms}
    shown = facts(answer(asked, _qanun_passage("naker", text, title, "6", 2029, "12")))
    assert shown and "14 (empat belas) hari kerja" in shown[0].text
