from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import create_engine, text

from retrieval.types import Chunk
from serve_app.agent.agent import Agent, AgentRequest, ToolsConfig
from serve_app.agent.planner import Planner
from serve_app.agent.tools.base import Evidence, ToolContext
from serve_app.agent.tools.bps import BpsTool
from serve_app.agent.tools.ckan import CkanPortal, OpenDataTool
from serve_app.agent.tools.egress import EgressPolicy
from serve_app.agent.tools.search import SummarizeTool
from serve_app.agent.tools.sql import SqlQueryTool, UnsafeStatement, check_select
from serve_app.agent.tools.table import TableQueryTool
from serve_app.agent.writers.embedded import EmbeddedWriter
from tests.support.agents import FakeRetriever, fake_find_references, port_of
from tests.support.answers import make_budget


def ctx(retriever: FakeRetriever, query: str, **kwargs: Any) -> ToolContext:
    return ToolContext(retriever=port_of(retriever), query=query, document_ids=None, **kwargs)


def chunk_of(evidence: Evidence) -> Chunk:
    assert evidence.chunk is not None
    return evidence.chunk


# ---------------------------------------------------------------- planner


@pytest.mark.parametrize(
    ("query", "kwargs", "intent", "task"),
    [
        ("Berapa anggaran pendidikan Aceh tahun 2023?", {}, "search", "answer"),
        ("Apa bunyi Pasal 7 ayat (1) UU 11/2006?", {}, "legal_check", "answer"),
        ("Apa yang mengubah UU 11/2006?", {}, "cross_reference", "answer"),
        ("Peraturan mana yang mencabut Undang-Undang Nomor 11 Tahun 2006?", {}, "cross_reference", "answer"),
        ("Ringkas dokumen ini", {"document_ids": frozenset({"d1"})}, "summarize", "summarize"),
        ("Berapa anggarannya?", {"single_document_id": "d1"}, "summarize", "answer"),
        ("Ringkas dokumen ini", {}, "search", "answer"),
        ("5 urusan dengan anggaran terbesar", {}, "table_query", "answer"),
        ("Bandingkan belanja pendidikan dan kesehatan", {}, "table_query", "answer"),
        ("Terima kasih!", {}, "chitchat", "chitchat"),
        ("Terima kasih!", {"follow_up_reasked": True}, "search", "answer"),
    ],
)
def test_planner_picks_by_intent(query: str, kwargs: dict[str, Any], intent: str, task: str) -> None:
    planner = Planner(
        available={"search", "legal_check", "cross_reference", "summarize", "table_query"},
        find_references=fake_find_references,
    )
    plan = planner.plan(query, **kwargs)
    assert (plan.intent, plan.task) == (intent, task)


def test_optional_tools_are_planned_only_when_registered() -> None:
    without = Planner(available={"search", "table_query"}, find_references=fake_find_references)
    assert without.plan("Berapa jumlah penduduk miskin Aceh 2022?").intent == "search"
    with_live = Planner(
        available={"search", "bps", "open_data", "sql_query"}, find_references=fake_find_references
    )
    plan = with_live.plan("Berapa jumlah penduduk miskin Aceh 2022?")
    assert [c.tool for c in plan.calls] == ["sql_query", "bps", "open_data"]


# ---------------------------------------------------------------- tables and documents


def test_table_top_n_names_the_rows(retriever: FakeRetriever) -> None:
    result = asyncio.run(
        TableQueryTool().run({"operation": "top"}, ctx(retriever, "2 urusan anggaran terbesar 2023"))
    )
    aggregate = result.evidence[0]
    assert aggregate.kind == "tool" and aggregate.identity["period"] == "2023"
    lines = aggregate.text.splitlines()
    assert lines[1] == "1. Pekerjaan Umum: Rp2.400.000.000.000 (sekitar Rp2,4 triliun)"
    assert lines[2].startswith("2. Pendidikan: Rp1.250.000.000.000")
    assert [chunk_of(e).chunk_id for e in result.evidence[1:]] == ["apba-c0"]


def test_table_compare_reports_both_sums_with_their_rows(retriever: FakeRetriever) -> None:
    query = "Bandingkan anggaran pendidikan dan kesehatan tahun 2022"
    result = asyncio.run(TableQueryTool().run({"operation": "compare"}, ctx(retriever, query)))
    first, second = result.evidence[:2]
    assert "Rp1.100.000.000.000" in first.text and "Rp790.000.000.000" in second.text
    # each computed figure carries the rows it came from; no derived difference is stated
    assert first.aggregate is not None and second.aggregate is not None
    assert first.aggregate.operation == "sum" and first.aggregate.rows
    assert not any("Rp310.000.000.000" in e.text for e in result.evidence)


def test_table_query_without_tables_is_empty() -> None:
    plain = FakeRetriever([])
    assert asyncio.run(TableQueryTool().run({}, ctx(plain, "total anggaran"))).status == "empty"


def test_summarize_keeps_what_fits_in_document_order(retriever: FakeRetriever) -> None:
    tool = SummarizeTool()
    small = ctx(retriever, "persetujuan internasional DPRA", token_room=60)
    result = asyncio.run(tool.run({"document_id": "uu-11-2006"}, small))
    assert [chunk_of(e).ordinal for e in result.evidence] == [1]  # the chunk the question points at
    scoped = ToolContext(port_of(retriever), "x", document_ids=frozenset({"apba"}))
    assert asyncio.run(tool.run({"document_id": "uu-11-2006"}, scoped)).status == "out_of_scope"


# ---------------------------------------------------------------- SQL


def test_check_select_accepts_only_one_read_only_select() -> None:
    assert check_select("SELECT a FROM t WHERE b = 'x; drop';") == "SELECT a FROM t WHERE b = 'x; drop'"
    assert check_select("WITH x AS (SELECT 1) SELECT * FROM x")
    for bad in [
        "DELETE FROM t",
        "SELECT 1; DROP TABLE t",
        "SELECT * INTO t2 FROM t",
        "SELECT 1 -- sneaky",
        "PRAGMA writable_schema = 1",
        "",
        "UPDATE t SET a = 1",
    ]:
        with pytest.raises(UnsafeStatement):
            check_select(bad)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'stat.db'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE belanja (urusan TEXT, tahun INTEGER, nilai INTEGER)"))
        conn.execute(
            text(
                "INSERT INTO belanja VALUES ('Pendidikan', 2023, 500), ('Kesehatan', 2023, 300), "
                "('Pendidikan', 2022, 450)"
            )
        )
    engine.dispose()
    return url


def test_sql_tool_plans_a_parameterised_select_and_stays_read_only(sqlite_url: str) -> None:
    tool = SqlQueryTool(sqlite_url, source_name="statistik", row_limit=10)
    result = asyncio.run(tool.run({"query": "Berapa total belanja pendidikan 2023?"}, _no_retriever_ctx()))
    texts = [e.text for e in result.evidence]
    assert result.status == "ok"
    assert texts[0] == "Jumlah nilai dari 1 baris tabel belanja (urusan Pendidikan, tahun 2023) adalah 500."
    assert texts[1] == "belanja: urusan = Pendidikan; tahun = 2023; nilai = 500"
    aggregate = result.evidence[0].aggregate
    assert aggregate is not None and aggregate.rows == (("Pendidikan", "2023", "500"),)
    shown = result.evidence[1].identity
    assert shown["period"] == "2023" and ":t" in str(shown["call"])
    written = asyncio.run(tool.run({"statement": "DELETE FROM belanja"}, _no_retriever_ctx()))
    assert written.status == "error"
    tool._db().dispose()


def test_sql_connection_is_read_only_even_past_the_check(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import serve_app.agent.tools.sql as tools_sql

    monkeypatch.setattr(tools_sql, "check_select", lambda s, **_: s)  # as if a write slipped past the check
    tool = SqlQueryTool(sqlite_url)
    with pytest.raises(Exception, match="readonly|read-only|attempt to write"):
        tool.execute("INSERT INTO belanja VALUES ('X', 2020, 1)", {})
    assert tool.execute("SELECT COUNT(*) FROM belanja", {})[1] == [(3,)]
    tool._db().dispose()


def _no_retriever_ctx() -> ToolContext:
    return ToolContext(retriever=port_of(FakeRetriever([])), query="", document_ids=None)


# ---------------------------------------------------------------- live portals over a local fake server


CKAN_PACKAGES = {
    "success": True,
    "result": {
        "count": 1,
        "results": [
            {
                "title": "Jumlah Penduduk Miskin Aceh",
                "metadata_modified": "2024-01-05T00:00:00",
                "resources": [
                    {"id": "res-1", "name": "Per kabupaten", "datastore_active": True},
                    {"id": "res-2", "name": "PDF", "datastore_active": False},
                ],
            }
        ],
    },
}
CKAN_RECORDS = {
    "success": True,
    "result": {
        "fields": [{"id": "_id"}, {"id": "kabupaten"}, {"id": "tahun"}, {"id": "penduduk_miskin"}],
        "records": [
            {"_id": 1, "kabupaten": "Aceh Besar", "tahun": 2022, "penduduk_miskin": 55720},
            {"_id": 2, "kabupaten": "Pidie", "tahun": 2022, "penduduk_miskin": 86310},
        ],
    },
}
BPS_VARS = {
    "status": "OK",
    "data-availability": "available",
    "data": [{"page": 1}, [{"var_id": 184, "title": "Persentase Penduduk Miskin", "unit": "Persen"}]],
}
BPS_DATA = {
    "status": "OK",
    "data-availability": "available",
    "var": [{"val": 184, "label": "Persentase Penduduk Miskin", "unit": "Persen"}],
    "turvar": [{"val": 0, "label": "Tidak ada"}],
    "vervar": [{"val": 1100, "label": "Aceh"}],
    "tahun": [{"val": 122, "label": "2022"}, {"val": 123, "label": "2023"}],
    "turtahun": [{"val": 0, "label": "Tahunan"}],
    "datacontent": {"110018401220": 14.75, "110018401230": 14.45},
}


class _Handler(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        parts = urlsplit(self.path)
        type(self).requests.append(self.path)
        query = parse_qs(parts.query)
        if parts.path.endswith("/package_search"):
            body: Any = CKAN_PACKAGES
        elif parts.path.endswith("/datastore_search"):
            assert query["resource_id"] == ["res-1"]
            body = CKAN_RECORDS
        elif "/model/var/" in parts.path:
            body = BPS_VARS
        elif "/model/data/" in parts.path:
            body = BPS_DATA
        else:
            self.send_response(404)
            self.end_headers()
            return
        payload = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def portal() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_open_data_reads_ckan_records_with_their_identity(portal: str) -> None:
    tool = OpenDataTool([CkanPortal("SatuData", f"http://{portal}")], egress=EgressPolicy([portal]))
    result = asyncio.run(tool.run({}, _ctx_query("Berapa penduduk miskin Pidie tahun 2022?")))
    assert result.status == "ok"
    top = result.evidence[0]
    expected = "Jumlah Penduduk Miskin Aceh — Per kabupaten: "
    expected += "kabupaten: Pidie; tahun: 2022; penduduk_miskin: 86.310"
    assert top.text == expected
    assert top.identity["dataset"] == "Jumlah Penduduk Miskin Aceh"
    assert (
        top.identity["period"] == "2022"
        and top.identity["call"] == "datastore_search resource_id=res-1 limit=100 q=2022"
    )
    assert str(top.identity["source"]).startswith("SatuData (127.0.0.1)")


def test_bps_reads_the_asked_year(portal: str) -> None:
    tool = BpsTool(f"http://{portal}", api_key="k", egress=EgressPolicy([portal]))
    result = asyncio.run(tool.run({}, _ctx_query("Persentase penduduk miskin Aceh 2023")))
    assert [e.text for e in result.evidence] == [
        "Persentase Penduduk Miskin — Aceh, tahun 2023: 14,45 Persen"
    ]
    assert result.evidence[0].identity["period"] == "2023"


def test_live_sources_off_or_not_allowed_say_so(portal: str) -> None:
    q = _ctx_query("penduduk miskin")
    off = OpenDataTool([], egress=EgressPolicy([portal]))
    assert (asyncio.run(off.run({}, q)).status, asyncio.run(off.run({}, q)).note) == (
        "disabled",
        "open_data_disabled",
    )
    elsewhere = EgressPolicy(["opendata.acehprov.go.id"])
    denied = OpenDataTool([CkanPortal("x", f"http://{portal}")], egress=elsewhere)
    assert asyncio.run(denied.run({}, q)).status == "not_allowed"
    keyless = BpsTool(f"http://{portal}", api_key=None, egress=EgressPolicy([portal]))
    assert asyncio.run(keyless.run({}, q)).note == "bps_disabled"


def test_agent_answers_from_the_portal_with_a_tool_passage(portal: str) -> None:
    tool = OpenDataTool([CkanPortal("Open Data", f"http://{portal}")], egress=EgressPolicy([portal]))
    agent = Agent(
        port_of(FakeRetriever([])),
        EmbeddedWriter(),
        tools=ToolsConfig(find_references=fake_find_references, extra=[tool]),
    )
    outcome = asyncio.run(
        agent.run(AgentRequest(query="Berapa penduduk miskin Pidie 2022?"), budget=make_budget())
    )
    assert outcome.tool == "open_data"
    facts = [s for s in outcome.segments if s.kind == "fact"]
    assert facts and "86.310" in facts[0].text
    assert outcome.passages[facts[0].cites[0]].kind == "tool"


def _ctx_query(query: str) -> ToolContext:
    return ToolContext(retriever=port_of(FakeRetriever([])), query=query, document_ids=None)


def test_planner_with_the_retrievers_own_reference_parser() -> None:
    planner = Planner(available={"search", "legal_check", "cross_reference"})
    plan = planner.plan("Apa isi Pasal 183 ayat (1) Undang-Undang Nomor 11 Tahun 2006?")
    assert plan.intent == "legal_check"
    ref = plan.calls[0].args["ref"]
    assert (ref.doc_type, ref.number, ref.year, ref.pasal, ref.ayat) == ("UU", "11", 2006, "183", "1")
    cross = planner.plan("Peraturan apa yang mencabut UU 11/2006?")
    assert cross.intent == "cross_reference" and cross.calls[0].args["relation"] == "revoke"
    assert planner.plan("Apa isi Pasal 12?").intent == "search"  # names no regulation


def test_relation_labels_reduce_to_what_a_question_asks() -> None:
    from serve_app.agent.tools.search import relation_kind

    assert [relation_kind(x) for x in ("revokes", "amends", "as_amended", "legal_basis", "mengubah")] == [
        "revoke",
        "amend",
        "cite",
        "cite",
        "amend",
    ]


def test_table_total_is_judged_against_the_rows_it_came_from(retriever: FakeRetriever) -> None:
    from judge.rules import check_claim
    from judge.types import JudgePassage
    from serve_app.answer.judge_items import judge_identity, judged_passage
    from serve_app.answer.segments import Passage

    query = "Berapa total anggaran pendidikan tahun 2022?"
    total = asyncio.run(TableQueryTool().run({"operation": "sum"}, ctx(retriever, query))).evidence[0]
    assert total.aggregate is not None and "Rp1.100.000.000.000" in total.text
    passage = Passage("P1", total.text, kind="tool", identity=total.identity, aggregate=total.aggregate)
    shown = JudgePassage("P1", judged_passage(passage), judge_identity(passage))
    assert "Rp1.100.000.000.000" not in shown.text.split("\n")[0]  # the judge reads rows, then its own sum
    assert check_claim(total.text, [shown]).verdict == "supported"
    tampered = total.text.replace("Rp1.100.000.000.000", "Rp1.100.000.000.001")
    assert check_claim(tampered, [shown]).verdict == "unsupported"
