"""MCP tools against real MCP server processes built with the SDK: the demo server over stdio and over
streamable HTTP (started here on a free port), and faulty servers that fail, crash or hang."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from serve_app.agent.tools.base import ToolContext, ToolResult
from serve_app.agent.tools.egress import EgressPolicy
from serve_app.agent.tools.mcp_client import McpNotAllowed, McpSource, wait_closed
from serve_app.agent.tools.mcp_tool import McpTool, build_mcp_tools, choose_arguments, describe_call
from serve_app.config import ConfigError
from tests.support.agents import FakeRetriever, port_of
from tests.support.mcp_servers import SECRET, Spec, demo_command, faulty_command, http_server

QUESTION = "Berapa jumlah penduduk Kabupaten Teluk Damai tahun 2024?"


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with http_server(demo_command()) as url:
        yield url


def allow(url: str) -> EgressPolicy:
    host = url.split("//")[1].split("/")[0]
    return EgressPolicy([host])


def ctx(query: str = QUESTION) -> ToolContext:
    return ToolContext(retriever=port_of(FakeRetriever([])), query=query, document_ids=None)


def run_tool(tool: McpTool, query: str = QUESTION) -> ToolResult:
    async def call() -> ToolResult:
        result = await tool.run({"query": query}, ctx(query))
        await wait_closed()  # the session's process is gone before the loop ends
        return result

    return asyncio.run(call())


def only_tool(spec: Spec, egress: EgressPolicy | None = None) -> McpTool:
    tools = build_mcp_tools([spec], egress or EgressPolicy())
    assert len(tools) == 1 and isinstance(tools[0], McpTool)
    return tools[0]


def assert_demo_passage(result: ToolResult, server: str) -> None:
    assert result.status == "ok", result
    assert len(result.evidence) == 1  # the one record of the asked indicator, region and year
    ev = result.evidence[0]
    assert ev.kind == "tool" and ev.chunk is None
    assert "Kabupaten Teluk Damai" in ev.text and "nilai: 152340 jiwa" in ev.text
    assert "FIKTIF" in ev.text  # the server's note on every record travels with it
    ident = ev.identity
    assert ident["dataset"] == "Statistik Demo Wilayah Fiktif (data fiktif)"
    assert ident["source"] == f"MCP {server}"
    assert ident["period"] == "2024"
    assert ident["call"] == f'cari_statistik(query="{QUESTION}", tahun=2024)'
    datetime.fromisoformat(str(ident["retrieved_at"]).replace("Z", "+00:00"))


# ---------------------------------------------------------------------------- listing and calling


def test_stdio_lists_only_the_allowed_tools() -> None:
    spec = Spec("demo", command=demo_command(), allowed_tools=["cari_statistik", "tidak_ada"])
    source = McpSource(spec, egress=EgressPolicy())
    assert [t.name for t in asyncio.run(source.list_tools())] == ["cari_statistik"]


def test_http_lists_only_the_allowed_tools(demo_url: str) -> None:
    source = McpSource(Spec("demo", url=demo_url, allowed_tools=["daftar_indikator"]), egress=allow(demo_url))
    assert [t.name for t in asyncio.run(source.list_tools())] == ["daftar_indikator"]


def test_a_tool_off_allowed_tools_is_neither_registered_nor_called(demo_url: str) -> None:
    spec = Spec("demo", url=demo_url, allowed_tools=["cari_statistik"])
    assert [t.name for t in build_mcp_tools([spec], allow(demo_url))] == ["mcp:demo:cari_statistik"]
    source = McpSource(spec, egress=allow(demo_url))
    with pytest.raises(McpNotAllowed):
        asyncio.run(source.call("daftar_indikator", lambda info: {}))


def test_stdio_call_becomes_a_passage_with_its_identity() -> None:
    assert_demo_passage(run_tool(only_tool(Spec("demo-stdio", command=demo_command()))), "demo-stdio")


def test_http_call_becomes_a_passage_with_its_identity(demo_url: str) -> None:
    tool = only_tool(Spec("demo-http", url=demo_url), allow(demo_url))
    assert_demo_passage(run_tool(tool), "demo-http")


def test_a_question_without_the_required_arguments_calls_nothing(demo_url: str) -> None:
    spec = Spec("demo", url=demo_url)
    schema = {"properties": {"kode_wilayah": {"type": "string"}}, "required": ["kode_wilayah"]}
    assert choose_arguments(schema, QUESTION) is None
    source = McpSource(spec, egress=allow(demo_url))
    assert asyncio.run(source.call("cari_statistik", lambda info: None)) is None


def test_arguments_come_from_the_schema_and_the_question() -> None:
    schema: dict[str, Any] = {
        "properties": {
            "kata_kunci": {"type": "string"},
            "tahun": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "periode": {"type": "string"},
            "limit": {"type": "integer"},
        },
        "required": ["kata_kunci"],
    }
    assert choose_arguments(schema, "Inflasi tahun 2023") == {
        "kata_kunci": "Inflasi tahun 2023",
        "tahun": 2023,
        "periode": "2023",
    }
    assert choose_arguments(schema, "Inflasi") == {"kata_kunci": "Inflasi"}  # no year asked: none sent
    assert describe_call("t", {"q": 'a "b"', "tahun": 2023}) == 't(q="a \\"b\\"", tahun=2023)'


# ---------------------------------------------------------------------------- refusals and failures


def test_a_url_off_the_allowlist_is_refused_before_any_connection() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        tool = only_tool(Spec("offlist", url=url), EgressPolicy(["127.0.0.1:1"]))
        result = run_tool(tool)
        assert (result.status, result.note, result.evidence) == ("not_allowed", "egress_denied", [])
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever connected


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_failing_server_is_unavailable_and_its_error_text_is_not_shown(transport: str) -> None:
    if transport == "stdio":
        result = run_tool(only_tool(Spec("rusak", command=faulty_command("fail"))))
    else:
        with http_server(faulty_command("fail")) as url:
            result = run_tool(only_tool(Spec("rusak", url=url), allow(url)))
    assert (result.status, result.note, result.evidence) == ("unavailable", "mcp_unavailable", [])
    assert SECRET not in repr(result)


def test_a_server_that_cannot_start_or_be_reached_is_unavailable() -> None:
    crashed = only_tool(Spec("mati", command=[demo_command()[0], "-c", "import sys; sys.exit(3)"]))
    assert (run_tool(crashed).status, run_tool(crashed).note) == ("unavailable", "mcp_unavailable")
    missing = Spec("hilang", command=["/nonexistent/mcp"])
    with pytest.raises(ConfigError, match=r"^MCP server .hilang.: the command /nonexistent/mcp is not found"):
        build_mcp_tools([missing], EgressPolicy())  # at start, not at every call
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/mcp"
    assert run_tool(only_tool(Spec("tutup", url=url), allow(url))).status == "unavailable"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_hanging_server_times_out_at_its_configured_timeout(transport: str) -> None:
    timeout = 4.0  # room for a loaded host to start the stdio server and reach the call

    def timed(tool: McpTool) -> tuple[ToolResult, float]:
        async def call() -> tuple[ToolResult, float]:  # timed inside the loop: asyncio.run waits for closing
            t0 = time.perf_counter()
            result = await tool.run({"query": QUESTION}, ctx())
            return result, time.perf_counter() - t0

        return asyncio.run(call())

    if transport == "stdio":
        result, took = timed(only_tool(Spec("macet", command=faulty_command("hang"), timeout_s=timeout)))
    else:
        with http_server(faulty_command("hang")) as url:
            result, took = timed(only_tool(Spec("macet", url=url, timeout_s=timeout), allow(url)))
    assert (result.status, result.note, result.evidence) == ("timeout", "mcp_unavailable", [])
    assert timeout <= took < timeout + 1.0  # the session closes in the background, not on the request's time


def test_the_planner_routes_a_statistics_question_to_each_mcp_tool_and_falls_back_to_search() -> None:
    from serve_app.agent.planner import Planner
    from tests.support.agents import fake_find_references

    names = {"search", "mcp:b:x", "mcp:a:y"}
    plan = Planner(available=names, find_references=fake_find_references).plan(QUESTION)
    assert [c.tool for c in plan.calls] == ["mcp:a:y", "mcp:b:x"] and plan.fallback_search
    prose = Planner(available=names, find_references=fake_find_references).plan("Apa tugas Wali Nanggroe?")
    assert [c.tool for c in prose.calls] == ["search"]
    without = Planner(available={"search"}, find_references=fake_find_references).plan(QUESTION)
    assert [c.tool for c in without.calls] == ["search"]


def test_results_of_other_shapes_keep_their_identity() -> None:
    from mcp_types import CallToolResult, TextContent
    from mcp_types import Tool as Info

    from serve_app.agent.tools.mcp_tool import result_evidence

    info = Info(name="inflasi", title="Inflasi bulanan", input_schema={"type": "object"})
    args = {"q": "inflasi 2023"}
    said = "Inflasi Maret 2023 sebesar 0,4 persen."
    text_only = CallToolResult(content=[TextContent(type="text", text=said)])
    [ev] = result_evidence("bps-mcp", info, args, text_only, max_records=8)
    assert ev.text == said
    assert (ev.identity["dataset"], ev.identity["source"], ev.identity["period"]) == (
        "Inflasi bulanan",
        "MCP bps-mcp",
        None,
    )
    assert ev.identity["call"] == 'inflasi(q="inflasi 2023")'
    # an older server's JSON object in a text block, without a record list: one passage, its period read
    as_json = CallToolResult(
        content=[TextContent(type="text", text='{"periode": "2023-03", "value": 0.4, "unit": "persen"}')]
    )
    [one] = result_evidence("bps-mcp", info, args, as_json, max_records=8)
    assert one.identity["period"] == "2023-03" and "value: 0.4" in one.text
    # records: one passage each, the figure with its unit, each record's own period, at most max_records
    rows = [{"tahun": y, "angka": y - 2000, "satuan": "unit"} for y in (2021, 2022, 2023)]
    structured = CallToolResult(content=[], structured_content={"judul": "Seri", "rows": rows})
    evs = result_evidence("s", info, args, structured, max_records=2)
    assert [(e.text, e.identity["period"], e.identity["dataset"]) for e in evs] == [
        ("Seri: tahun: 2021; angka: 21 unit", "2021", "Seri"),
        ("Seri: tahun: 2022; angka: 22 unit", "2022", "Seri"),
    ]
