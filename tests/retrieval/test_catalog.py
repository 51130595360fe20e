"""retrieval.catalog over real Chunks (the fake retriever's lookups): matching, paging, sections and a
passage's neighbours, without any service around them."""

from __future__ import annotations

from retrieval.catalog import DocumentQuery, document_outline, find_documents, passage_view, sections_of
from tests.support.agents import FakeRetriever, make_chunk

CHUNKS = [
    make_chunk("qanun-1", 0, "Menimbang ...", title="Qanun Aceh Nomor 1 Tahun 2023 tentang APBA",
               doc_type="Qanun", number="1", year=2023),
    make_chunk("qanun-1", 1, "Pasal 1 ...", title="Qanun Aceh Nomor 1 Tahun 2023 tentang APBA",
               doc_type="Qanun", number="1", year=2023, section=("BAB I", "Pasal 1")),
    make_chunk("qanun-1", 2, "Pasal 1 lanjutan", title="Qanun Aceh Nomor 1 Tahun 2023 tentang APBA",
               doc_type="Qanun", number="1", year=2023, section=("BAB I", "Pasal 1")),
    make_chunk("qanun-1", 3, "Pasal 2 ...", title="Qanun Aceh Nomor 1 Tahun 2023 tentang APBA",
               doc_type="Qanun", number="1", year=2023, section=("BAB I", "Pasal 2")),
    make_chunk("pergub-7", 0, "Pergub ...", title="Peraturan Gubernur Aceh Nomor 07 Tahun 2022",
               doc_type="Pergub", number="07", year=2022),
    make_chunk("stat", 0, "Tabel ...", title="Statistik Kemiskinan Aceh", doc_type="Statistik"),
]


def test_find_matches_every_word_type_number_and_year() -> None:
    source = FakeRetriever(CHUNKS)

    def ids(**kw: object) -> list[str]:
        return [d.document_id for d in find_documents(source, DocumentQuery(**kw)).documents]  # type: ignore[arg-type]

    assert ids() == ["pergub-7", "qanun-1", "stat"]  # by title
    assert ids(q="aceh 2023 qanun") == ["qanun-1"]
    assert ids(q="aceh kemiskinan") == ["stat"]
    assert ids(number="7") == ["pergub-7"], "numbers compare normalised (07 is 7)"
    assert ids(doc_type="QANUN", year=2023) == ["qanun-1"]
    assert ids(visible=frozenset({"stat"})) == ["stat"]


def test_pages_count_all_matches() -> None:
    source = FakeRetriever(CHUNKS)
    first = find_documents(source, DocumentQuery(page=1, page_size=2))
    second = find_documents(source, DocumentQuery(page=2, page_size=2))
    assert first.total == second.total == 3
    assert [d.document_id for d in first.documents + second.documents] == ["pergub-7", "qanun-1", "stat"]


def test_sections_are_runs_of_one_heading_path() -> None:
    outline = document_outline(FakeRetriever(CHUNKS), "qanun-1")
    assert outline is not None
    assert [(s.path, s.chunk_ids) for s in outline.sections] == [
        ((), ("qanun-1-c0",)),
        (("BAB I", "Pasal 1"), ("qanun-1-c1", "qanun-1-c2")),
        (("BAB I", "Pasal 2"), ("qanun-1-c3",)),
    ]
    assert sections_of([]) == []
    assert document_outline(FakeRetriever(CHUNKS), "qanun-1", visible=frozenset({"stat"})) is None


def test_a_passage_has_its_neighbours_in_its_own_document_only() -> None:
    source = FakeRetriever(CHUNKS)
    view = passage_view(source, "qanun-1", "qanun-1-c1", neighbours=2)
    assert view is not None
    assert [c.chunk_id for c in view.before] == ["qanun-1-c0"]
    assert [c.chunk_id for c in view.after] == ["qanun-1-c2", "qanun-1-c3"]
    assert passage_view(source, "pergub-7", "qanun-1-c1") is None, "a chunk of another document"
    assert passage_view(source, "qanun-1", "qanun-1-c1", visible=frozenset()) is None
