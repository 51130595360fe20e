from __future__ import annotations

import asyncio
from typing import Any

from retrieval.types import Chunk
from serve_app.agent.agent import Agent, AgentOutcome, AgentRequest, ToolsConfig
from serve_app.agent.tools.base import ToolEvent
from serve_app.agent.writers.embedded import EmbeddedWriter, split_units
from serve_app.answer.compose import compose
from serve_app.answer.refusals import LEAD_IN_FRAMING, NOT_FOUND_FRAMING, SUMMARY_LEAD_IN
from serve_app.answer.segments import Passage
from tests.agent.conftest import BUDGET_HEADER
from tests.support.agents import FakeRetriever, fake_find_references, port_of
from tests.support.answers import make_budget


def make_agent(retriever: FakeRetriever, **kwargs: Any) -> Agent:
    tools = ToolsConfig(find_references=fake_find_references, **kwargs.pop("tools", {}))
    return Agent(port_of(retriever), EmbeddedWriter(), tools=tools, **kwargs)


def run(agent: Agent, query: str, **kwargs: Any) -> tuple[AgentOutcome, list[dict[str, Any]]]:
    budget = kwargs.pop("budget", None) or make_budget()
    events: list[Any] = []  # the tests read the events' nested data

    async def sink(event: ToolEvent) -> None:
        events.append(event)

    outcome = asyncio.run(agent.run(AgentRequest(query=query, **kwargs), budget=budget, on_event=sink))
    return outcome, events


def chunk_of(passage: Passage) -> Chunk:
    assert passage.chunk is not None
    return passage.chunk


def test_budget_question_answers_with_the_verbatim_row(retriever: FakeRetriever) -> None:
    outcome, events = run(make_agent(retriever), "Berapa anggaran pendidikan Aceh tahun 2023?")
    assert outcome.refusal is None and outcome.error is None
    segs = outcome.segments
    assert (segs[0].text, segs[0].kind) == (LEAD_IN_FRAMING, "framing")
    assert [(s.layout, s.kind) for s in segs[1:]] == [("table_header", "framing"), ("table_row", "fact")]
    assert segs[1].text == BUDGET_HEADER
    row = segs[2]
    assert row.text == "Pendidikan | 2023 | Rp1.250.000.000.000"
    cited = outcome.passages[row.cites[0]]
    assert row.text in cited.text and cited.chunk is not None and cited.chunk.document_id == "apba"
    answer = compose(segs).answer
    assert "Rp1.250.000.000.000" in answer and "2022" not in answer and "Kesehatan" not in answer
    assert outcome.tool == "search" and outcome.tool_executed
    assert [e["event"] for e in events] == ["tool.started", "tool.finished"]
    assert outcome.model_records and outcome.model_records[0].engine == "embedded"


def test_sentence_answer_is_a_verbatim_sentence_citing_its_passage(retriever: FakeRetriever) -> None:
    outcome, _ = run(make_agent(retriever), "Berapa persen alokasi belanja pendidikan dari APBA?")
    facts = [s for s in outcome.segments if s.kind == "fact"]
    assert (
        facts
        and facts[0].text
        == "Pasal 12 (1) Belanja urusan pendidikan dialokasikan paling sedikit 20% dari APBA."
    )
    assert facts[0].text in outcome.passages[facts[0].cites[0]].text


def test_nothing_relevant_gives_the_not_found_framing(retriever: FakeRetriever) -> None:
    outcome, _ = run(make_agent(retriever), "Berapa anggaran perikanan tangkap tahun 2019?")
    assert outcome.refusal is None and outcome.error is None
    assert [(s.text, s.kind) for s in outcome.segments] == [(NOT_FOUND_FRAMING, "framing")]


def test_legal_check_reads_the_named_article(retriever: FakeRetriever) -> None:
    outcome, events = run(make_agent(retriever), "Apa isi Pasal 7 UU 11/2006?")
    assert outcome.tool == "legal_check"
    assert [chunk_of(p).chunk_id for p in outcome.passages.values()] == ["uu-11-2006-c0"]
    assert events[0]["data"]["arguments"]["ref"]["pasal"] == "7"


def test_cross_reference_finds_the_amending_law(retriever: FakeRetriever) -> None:
    outcome, _ = run(make_agent(retriever), "Apa yang mengubah UU 11/2006?")
    assert outcome.tool == "cross_reference"
    facts = [s for s in outcome.segments if s.kind == "fact"]
    assert facts and "mengubah ketentuan" in facts[0].text
    assert chunk_of(outcome.passages[facts[0].cites[0]]).document_id == "perppu-2-2008"


def test_follow_up_on_one_document_reads_it_whole(retriever: FakeRetriever) -> None:
    outcome, _ = run(make_agent(retriever), "Tolong ringkas dokumen itu", single_document_id="uu-11-2006")
    assert outcome.tool == "summarize"
    assert [chunk_of(p).ordinal for p in outcome.passages.values()] == [0, 1]
    assert outcome.segments[0].text == SUMMARY_LEAD_IN
    assert all(s.cites for s in outcome.segments if s.kind == "fact")


def test_table_query_sums_and_cites_the_rows(retriever: FakeRetriever) -> None:
    outcome, _ = run(make_agent(retriever), "Berapa total anggaran pendidikan seluruh tahun?")
    assert outcome.tool == "table_query"
    p1 = outcome.passages["P1"]
    assert p1.kind == "tool" and str(p1.identity["call"]).startswith("table_query(operation=sum")
    assert "Rp2.350.000.000.000" in p1.text  # 1.250 + 1.100 triliun, computed, not written by a model
    assert "2 baris" in p1.text
    assert any(p.kind == "chunk" for p in outcome.passages.values())
    facts = [s for s in outcome.segments if s.kind == "fact"]
    assert facts[0].cites == ("P1",) and facts[0].text in p1.text


def test_greeting_needs_no_tool(retriever: FakeRetriever) -> None:
    outcome, events = run(make_agent(retriever), "Halo, selamat pagi")
    assert not outcome.tool_executed and outcome.tool is None and events == []
    assert [s.kind for s in outcome.segments] == ["framing"]


def test_preferred_documents_come_first(retriever: FakeRetriever) -> None:
    outcome, _ = run(
        make_agent(retriever),
        "Pasal tentang urusan pemerintahan Aceh",
        preferred_document_ids=["perppu-2-2008"],
    )
    assert chunk_of(outcome.passages["P1"]).document_id == "perppu-2-2008"


def test_flagged_passages_are_not_shown(retriever: FakeRetriever) -> None:
    def screen(text: str) -> bool:
        return "Pendidikan | 2023" in text

    outcome, _ = run(
        make_agent(retriever, guard_passage_screen=screen), "Berapa anggaran pendidikan Aceh tahun 2023?"
    )
    assert all("Pendidikan | 2023" not in p.text for p in outcome.passages.values())
    assert list(outcome.passages) == [f"P{i}" for i in range(1, len(outcome.passages) + 1)]


def test_split_units_keeps_verbatim_pieces() -> None:
    line = (
        "Dalam Qanun ini yang dimaksud dengan: a. Pemerintah Aceh adalah unsur penyelenggara pemerintahan; "
        "dan b. Gubernur adalah kepala Pemerintah Aceh yang dipilih. Biaya Rp. 5.000 dibayar No. 3 kali."
    )
    units = split_units(line)
    assert all(u in line for u in units)
    assert "Pemerintah Aceh adalah unsur penyelenggara pemerintahan" in units
    assert "Biaya Rp. 5.000 dibayar No. 3 kali." in units


def test_split_units_never_cuts_inside_an_amount_with_ocr_spaces() -> None:
    # OCR puts a space after a thousands dot; a sentence cut there would state a figure 10**6 times too small.
    line = (
        "Belanja Negara direncanakan sebesar Rp4.321.987. 654.000,00 (empat kuadriliun rupiah). "
        "Pendapatan sebesar Rp 9 . 876.543. 2 10.000,00 dan seterusnya. "
        "Jumlahnya Rp7.000,00. Pasal 9 berlaku."
    )
    units = split_units(line)
    assert "Belanja Negara direncanakan sebesar Rp4.321.987. 654.000,00 (empat kuadriliun rupiah)." in units
    assert any(u.startswith("Pendapatan sebesar Rp 9 . 876.543. 2 10.000,00") for u in units)
    assert not any(u.endswith("Rp4.321.987.") for u in units)
    assert "Pasal 9 berlaku." not in " ".join(units[:1])


def test_list_item_is_written_under_its_lead_in() -> None:
    from serve_app.answer.segments import Passage

    text = (
        "(3) Jumlah penduduk Desa, luas wilayah Desa, dan angka kemiskinan Desa dihitung dengan bobot: "
        "a. 30% (tiga puluh per seratus) untuk jumlah penduduk Desa; b. 20% (dua puluh per seratus) untuk "
        "luas wilayah Desa; dan c. 50% (lima puluh per seratus) untuk angka kemiskinan Desa."
    )
    segments = EmbeddedWriter().segments("Berapa bobot angka kemiskinan desa?", [Passage("P1", text)])
    assert [(s.layout, s.kind) for s in segments[:3]] == [
        ("paragraph", "framing"),
        ("paragraph", "fact"),
        ("list_item", "fact"),
    ]
    assert {s.layout for s in segments[3:]} <= {"list_item"}
    lead, item = segments[1], segments[2]
    assert lead.text.endswith("dihitung dengan bobot:") and lead.text in text
    # the item that states the asked weight comes first; every item is verbatim and cites its passage
    assert item.text == "50% (lima puluh per seratus) untuk angka kemiskinan Desa."
    assert all(s.text in text and s.cites == ("P1",) for s in segments[1:])
    assert compose(segments).spans[2].context == lead.text


def test_a_regulation_year_is_not_an_asked_period() -> None:
    from serve_app.agent.writers.units import expected_figure, query_terms

    terms, asked_years = query_terms("Berapa persen minimal APBA untuk pendidikan menurut UU 11/2006?")
    assert (
        asked_years == [] and "pendidikan" in [raw for raw, _ in terms] and "uu" not in [r for r, _ in terms]
    )
    assert query_terms("Berapa Dana Desa dalam APBN Tahun Anggaran 2023?")[1] == ["2023"]
    assert expected_figure("Berapa persen minimal APBA?") == "percent"
    assert expected_figure("Berapa lama masa jabatan Kepala Desa?") == "duration"
    assert expected_figure("Berapa alokasi dana hibah Kabupaten Contoh?") == "money"
