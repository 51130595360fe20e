"""The citation routes over the demo corpus: search and paging, a document's sections, a passage with its
neighbours, the 422s of a bad query string, and the partner scoping (a kept document is not listed and
answers 404, exactly like an unknown one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from serve_app.config import SelectionConfig, SelectionFilter
from serve_app.scope import visible_documents
from tests.contract.checks import validate_against_schema
from tests.support.partners import Partners
from tests.support.service import HEADERS, client_for, config

A, B = "https://idp.mitra-a.example", "https://idp.mitra-b.example"


@pytest.fixture(scope="module")
def client(
    demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    cfg = config(tmp_path_factory.mktemp("docs"), demo_index, limits={"requests_per_minute": 100_000})
    with client_for(cfg, demo_retriever) as c:
        yield c


def _all(client: TestClient, headers: dict[str, str] = HEADERS, **params: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    page = 1
    while True:
        r = client.get("/documents", headers=headers, params={**params, "page": page, "page_size": 3})
        assert r.status_code == 200, r.text
        validate_against_schema(r.json(), "document_list")
        out += r.json()["documents"]
        if page * 3 >= r.json()["total"]:
            return out
        page += 1


def test_pages_cover_every_document_once_in_a_stable_order(client: TestClient, demo_retriever: Any) -> None:
    paged = _all(client)
    docs = demo_retriever.documents()
    by_title = sorted(docs, key=lambda d: (d.identity.title.casefold(), d.document_id))
    assert [d["document_id"] for d in paged] == [d.document_id for d in by_title]
    assert len({d["document_id"] for d in paged}) == len(demo_retriever.documents()) == 10
    beyond = client.get("/documents", headers=HEADERS, params={"page": 99}).json()
    assert beyond["documents"] == [] and beyond["total"] == 10


def test_search_by_title_type_number_and_year(client: TestClient) -> None:
    def titles(**params: Any) -> list[str]:
        return [d["title"] for d in _all(client, **params)]

    assert titles(type="qanun", year=2023) == [
        "Qanun Aceh Nomor 1 Tahun 2023 tentang Anggaran Pendapatan dan Belanja Aceh Tahun Anggaran 2023"
    ]
    assert titles(type="Pergub", number="12")[0].startswith("Peraturan Gubernur Aceh Nomor 12 Tahun 2023")
    assert all("Statistik" in t for t in titles(q="statistik aceh")) and len(titles(q="statistik aceh")) == 2
    assert titles(q="kata-yang-tidak-ada") == []
    assert titles(type="Qanun", number="99") == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page": "0"}, "page"),
        ({"page_size": "101"}, "page_size"),
        ({"page_size": "0"}, "page_size"),
        ({"year": "dua ribu"}, "year"),
        ({"q": "   "}, "q"),
        ({"sort": "title"}, "sort"),
    ],
)
def test_a_bad_query_string_is_a_422_naming_the_field(
    client: TestClient, params: dict[str, str], field: str
) -> None:
    r = client.get("/documents", headers=HEADERS, params=params)
    assert r.status_code == 422
    assert [e["field"] for e in r.json()["detail"]] == [field]
    validate_against_schema(r.json(), "error")


def test_a_repeated_parameter_is_a_422(client: TestClient) -> None:
    r = client.get("/documents?year=2023&year=2022", headers=HEADERS)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "year"


def test_credentials_come_first(client: TestClient) -> None:
    assert client.get("/documents", params={"page": "0"}).status_code == 401
    assert client.get("/documents/x").status_code == 401
    assert client.get("/documents/x/passages/y").status_code == 401


def test_a_document_shows_its_sections_in_order(client: TestClient, demo_retriever: Any) -> None:
    doc = next(d for d in demo_retriever.documents() if d.identity.doc_type == "Qanun")
    r = client.get(f"/documents/{doc.document_id}", headers=HEADERS)
    assert r.status_code == 200
    view = r.json()
    validate_against_schema(view, "document_view")
    chunks = demo_retriever.document_chunks(doc.document_id)
    assert [i for s in view["sections"] for i in s["chunk_ids"]] == [c.chunk_id for c in chunks]
    assert any(any(p.startswith("Pasal") for p in s["path"]) for s in view["sections"])
    assert view["title"] == doc.identity.title and view["chunk_count"] == len(chunks)


def test_a_passage_comes_with_its_neighbours_and_citation(client: TestClient, demo_retriever: Any) -> None:
    doc = next(d for d in demo_retriever.documents() if d.source.endswith(".csv"))
    chunks = demo_retriever.document_chunks(doc.document_id)
    r = client.get(f"/documents/{doc.document_id}/passages/{chunks[1].chunk_id}", headers=HEADERS)
    assert r.status_code == 200
    body = r.json()
    validate_against_schema(body, "passage_response")
    assert body["text"] == chunks[1].text and body["kind"] == "table"
    assert body["context"] == chunks[1].context and "|" in body["context"]  # the table header
    assert [n["chunk_id"] for n in body["before"]] == [chunks[0].chunk_id]
    assert [n["chunk_id"] for n in body["after"]] == [chunks[2].chunk_id]
    assert body["citation"] == {**chunks[1].citation(), "citation_key": None}
    first = client.get(f"/documents/{doc.document_id}/passages/{chunks[0].chunk_id}", headers=HEADERS).json()
    assert first["before"] == []


def test_unknown_or_mismatched_ids_are_404(client: TestClient, demo_retriever: Any) -> None:
    docs = demo_retriever.documents()
    other = demo_retriever.document_chunks(docs[1].document_id)[0]
    for path in (
        "/documents/no-such-doc",
        f"/documents/{docs[0].document_id}/passages/no-such-chunk",
        f"/documents/{docs[0].document_id}/passages/{other.chunk_id}",  # a chunk of another document
    ):
        r = client.get(path, headers=HEADERS)
        assert r.status_code == 404 and r.json()["error"] == "not_found", path


def test_a_selection_narrows_the_list(client: TestClient) -> None:
    assert {d["type"] for d in _all(client, selection="statistik")} == {"Statistik"}
    assert _all(client, selection="no-such-selection") == []


# ---------------------------------------------------------------------------- partner scoping


@pytest.fixture()
def scoped(tmp_path: Path, demo_index: Path, demo_retriever: Any) -> Iterator[dict[str, Any]]:
    """The statistics are kept for partner A; partner B sees the rest of the corpus."""
    partners = Partners(tmp_path, {"a": A, "b": B})
    selections = {
        "statistik-a": SelectionConfig(filter=SelectionFilter(type="Statistik"), partners=[A]),
        "anggaran": SelectionConfig(filter=SelectionFilter(type="Qanun")),
    }
    cfg = config(tmp_path, demo_index, partners_file=str(partners.path), selections=selections)
    with client_for(cfg, demo_retriever) as c:
        yield {"client": c, "a": partners.headers("a", "ana"), "b": partners.headers("b", "budi")}


def test_a_kept_document_is_not_listed_and_answers_404(scoped: dict[str, Any], demo_retriever: Any) -> None:
    client = scoped["client"]
    stats = [d for d in demo_retriever.documents() if d.identity.doc_type == "Statistik"]
    assert len(stats) == 2
    seen_a = {d["document_id"] for d in _all(client, scoped["a"])}
    seen_b = {d["document_id"] for d in _all(client, scoped["b"])}
    assert seen_a == {d.document_id for d in demo_retriever.documents()}
    assert seen_b == seen_a - {d.document_id for d in stats}
    assert _all(client, scoped["b"], selection="statistik-a") == []
    kept = stats[0]
    chunk = demo_retriever.document_chunks(kept.document_id)[0]
    base = f"/documents/{kept.document_id}"
    for path in (base, f"{base}/passages/{chunk.chunk_id}"):
        assert client.get(path, headers=scoped["a"]).status_code == 200
        hidden = client.get(path, headers=scoped["b"])
        unknown = client.get("/documents/no-such-doc", headers=scoped["b"])
        assert hidden.status_code == 404 and hidden.json() == unknown.json()
    assert client.get("/documents", headers=HEADERS).status_code == 401, "partners on: a JWT is needed"


def test_the_query_routes_cannot_reach_a_kept_document_either(
    scoped: dict[str, Any], demo_retriever: Any
) -> None:
    """The citation routes and the query routes share one rule: naming a kept document's id does not reach
    it for a caller outside the selection that keeps it, and an unscoped search leaves it out."""
    client = scoped["client"]
    kept = [d.document_id for d in demo_retriever.documents() if d.identity.doc_type == "Statistik"]

    def scope_of(headers: dict[str, str], **body: Any) -> dict[str, Any]:
        r = client.post("/query/v2", json={"query": "Berapa jumlah penduduk?", **body}, headers=headers)
        assert r.status_code == 200, r.text
        return dict(r.json())

    refused = scope_of(scoped["b"], document_ids=kept)
    assert refused["fallback_used"] is True and refused["fallback_reason"] == "source_scope_empty"
    allowed = scope_of(scoped["a"], document_ids=kept)
    assert allowed.get("fallback_reason") != "source_scope_empty"
    r = client.post("/search", json={"query": "jumlah penduduk statistik", "top_k": 50}, headers=scoped["b"])
    assert r.status_code == 200, r.text
    assert not {hit["document_id"] for hit in r.json()["results"]} & set(kept)
    r = client.post("/search", json={"query": "jumlah penduduk statistik", "top_k": 50}, headers=scoped["a"])
    assert {hit["document_id"] for hit in r.json()["results"]} & set(kept), "the partner still finds them"


def test_visibility_rule() -> None:
    sel = {
        "kept": SelectionConfig(document_ids=["d1", "d2"], partners=[A]),
        "open": SelectionConfig(document_ids=["d2"]),
    }

    def seen(issuer: str | None, selections: dict[str, SelectionConfig] = sel) -> frozenset[str] | None:
        return visible_documents(
            selections=selections, indexed_ids=["d1", "d2", "d3"], filter_ids={}, caller_issuer=issuer
        )

    assert seen(B) == frozenset({"d2", "d3"}), "d2 stays visible through the open selection"
    assert seen(A) == frozenset({"d1", "d2", "d3"})
    assert seen(None) == frozenset({"d2", "d3"})
    assert seen(None, {"open": sel["open"]}) is None, "no partner-limited selection: everything"


def test_documents_routes_are_rate_limited_like_the_query_routes(
    tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    cfg = config(tmp_path, demo_index, limits={"requests_per_minute": 3})
    with client_for(cfg, demo_retriever) as c:
        statuses = [c.get("/documents", headers=HEADERS) for _ in range(8)]
        limited = [r for r in statuses if r.status_code == 429]
        assert limited and int(limited[0].headers["Retry-After"]) >= 1
        assert c.get("/documents", headers=HEADERS, params={"page": "0"}).status_code == 422, "422 before 429"
