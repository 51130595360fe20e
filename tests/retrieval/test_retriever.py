from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from retrieval.legal import find_references
from retrieval.retriever import Retriever


def _doc_id(retriever: Retriever, source: str) -> str:
    return next(d.document_id for d in retriever.documents() if d.source == source)


@pytest.mark.parametrize(
    "query",
    [
        "Pasal 183 UU 11/2006",
        "pasal 183 Undang-Undang Nomor 11 Tahun 2006",
        "apa isi Pasal 183 UU No. 11/2006 tentang dana otonomi khusus",
    ],
)
def test_a_named_article_ranks_first(retriever: Retriever, query: str) -> None:
    hits = retriever.search(query, top_k=5)
    top = hits[0].chunk
    assert top.source == "uu/uu_11_2006.md"
    assert top.section_path[-1] == "Pasal 183" and top.text.startswith("Pasal 183")
    assert top.legal_reference is not None
    assert top.legal_reference.startswith("Undang-Undang Nomor 11 Tahun 2006, Pasal 183 ayat (1)")
    assert hits[0].score >= hits[-1].score


def test_article_and_ayat_lookup(retriever: Retriever) -> None:
    ref = find_references("Pasal 183 ayat (2) UU 11/2006")[0]
    chunks = retriever.lookup_article(ref)
    assert chunks and all(c.legal_reference is not None and "Pasal 183" in c.legal_reference for c in chunks)
    assert all(c.legal_reference is not None and "Penjelasan" not in c.legal_reference for c in chunks)
    assert retriever.lookup_article(find_references("Pasal 999 UU 11/2006")[0]) == []
    qanun = find_references("Qanun Aceh Nomor 1 Tahun 2023 Pasal 6")[0]
    assert [c.section_path for c in retriever.lookup_article(qanun)] == [("BAB II", "Pasal 6")]


def test_plain_queries_find_the_right_documents(retriever: Retriever) -> None:
    assert (
        retriever.search("garis kemiskinan per kapita", top_k=3)[0].chunk.source
        == "statistik_kemiskinan.html"
    )
    hit = retriever.search("berapa belanja urusan pendidikan 871.667.219.294", top_k=3)[0]
    assert "871.667.219.294" in hit.chunk.text
    row = retriever.search("retribusi daerah pagu 2023", top_k=3, mode="bm25")[0].chunk
    assert row.kind == "table" and row.context == "kode_rekening | uraian | pagu_2023"


def test_document_filters(retriever: Retriever) -> None:
    qanun = _doc_id(retriever, "qanun_apba_2023.md")
    hits = retriever.search("dana otonomi khusus", top_k=10, document_ids={qanun, "unknown-id"})
    assert hits and {h.chunk.document_id for h in hits} == {qanun}
    assert retriever.search("dana otonomi khusus", document_ids={"unknown-id"}) == []
    assert retriever.search("dana otonomi khusus", document_ids=[]) == []
    assert retriever.resolve_filter(type="qanun") == [qanun]
    assert retriever.resolve_filter(type="Qanun", year=2023, issuer="aceh") == [qanun]
    assert retriever.resolve_filter(type="Qanun", year=2022) == []
    assert retriever.resolve_filter(type="Dataset") == [_doc_id(retriever, "lampiran_apba_2023.csv")]
    assert retriever.resolve_filter(type="Statistik") == [_doc_id(retriever, "statistik_kemiskinan.html")]


def test_provenance_modes_and_batches(retriever: Retriever) -> None:
    query = "pengelolaan dana bagi hasil minyak dan gas"
    hits = retriever.search(query, top_k=4, provenance=True)
    assert set(hits[0].stages) == {"bm25", "dense", "fused", "reranked"}
    # a further chunk of one document may be passed over for another document's
    ranks = [h.stages["reranked"]["rank"] or 0 for h in hits]
    assert ranks[0] == 1 and ranks == sorted(ranks)
    assert len({h.chunk.document_id for h in hits}) >= min(2, len(retriever.documents()))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert retriever.search(query, top_k=4)[0].stages == {}
    bm25 = retriever.search(query, top_k=3, mode="bm25", provenance=True)
    assert set(bm25[0].stages) == {"bm25"} and "Pasal 182" in bm25[0].chunk.text
    assert len(retriever.search(query, top_k=3, mode="dense")) == 3
    single = [[h.chunk.chunk_id for h in retriever.search(q, top_k=3)] for q in (query, "zakat", "Pasal 6")]
    batched = [
        [h.chunk.chunk_id for h in hits]
        for hits in retriever.search_many([query, "zakat", "Pasal 6"], top_k=3)
    ]
    assert single == batched


def test_concurrent_searches_agree(retriever: Retriever) -> None:
    queries = ["dana otonomi khusus", "Pasal 183 UU 11/2006", "garis kemiskinan", "pajak daerah"] * 5
    expected = [[h.chunk.chunk_id for h in retriever.search(q)] for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda q: [h.chunk.chunk_id for h in retriever.search(q)], queries))
    assert got == expected


def test_cross_references_tables_and_metadata(retriever: Retriever) -> None:
    uu = _doc_id(retriever, "uu/uu_11_2006.md")
    cites = retriever.cross_references("UU", "11", 2006)
    assert [(info.source, relation) for info, relation, _ in cites] == [("qanun_apba_2023.md", "cites")]
    revoked = retriever.cross_references("UU", "18", 2001)
    assert [(info.document_id, relation) for info, relation, _ in revoked] == [(uu, "revokes")]
    relations = {relation for _, relation, _ in retriever.cross_references("UU", "8", 2005)}
    assert relations == {"as_amended"}
    assert {r for _, r, _ in retriever.cross_references("UU", "32", 2004)} == {"legal_basis"}
    table = retriever.table(_doc_id(retriever, "lampiran_apba_2023.csv"))
    assert table is not None and table.columns == ["kode_rekening", "uraian", "pagu_2023"]
    chunk_id, cells = table.rows[1]
    assert cells == ["4.1.02", "Retribusi Daerah", "38415260000"]
    row_chunk = retriever.chunk(chunk_id)
    assert row_chunk is not None and row_chunk.text == "4.1.02 | Retribusi Daerah | 38415260000"
    assert retriever.table(uu) is None
    assert sorted(retriever.corpus_sources) == sorted(d.source for d in retriever.documents())
    assert len(retriever.fingerprint) == 64
    citation = row_chunk.citation()
    assert citation["document_type"] == "Dataset" and citation["section_path"] == [
        "lampiran_apba_2023",
        "baris 2",
    ]


def test_a_bare_article_number_within_a_scope(retriever: Retriever) -> None:
    qanun = _doc_id(retriever, "qanun_apba_2023.md")
    hits = retriever.search("Pasal 6", top_k=3, document_ids=[qanun])
    assert hits[0].chunk.section_path == ("BAB II", "Pasal 6")


def test_a_table_row_named_by_its_line_ranks_first(retriever: Retriever) -> None:
    hits = retriever.search("berapa anggaran belanja pegawai yang direncanakan", top_k=5, provenance=True)
    top = hits[0]
    assert top.chunk.kind == "table" and "Belanja Pegawai" in top.chunk.text
    assert top.stages["table"]["score"] == 1.0
    # a query that names a regulation is an exact request: no table row is pushed in
    named = retriever.search("belanja pegawai Pasal 183 UU 11/2006", top_k=5, provenance=True)
    assert all("table" not in h.stages for h in named)
