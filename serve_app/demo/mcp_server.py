"""The MCP part of the live-source demo (configs/demo_sources.yaml): an MCP server of FICTIONAL statistics,
built on the MCP SDK's ``MCPServer`` (v1's FastMCP). Nothing in serve_app imports it; it runs as a process.

Every figure here is invented for the demo: the regions do not exist, and every result says so
(``keterangan``). It shows what aceh-rag does with an MCP source: the allowed tool is listed and called, its
records become passages with their identity, and the answer cites them.

    .venv/bin/python -m serve_app.demo.mcp_server        # stdio (what configs/demo_sources.yaml runs)
    .venv/bin/python -m serve_app.demo.mcp_server --transport streamable-http --port 8765
                                                          # streamable HTTP at http://127.0.0.1:8765/mcp

Tools: ``cari_statistik`` (search the indicators, optionally for one year) and ``daftar_indikator`` (the
indicator names; not allowed in the demo config, to show ``allowed_tools`` at work).
"""

from __future__ import annotations

import argparse
import re

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

NOTE = "DATA FIKTIF untuk demo aceh-rag; bukan statistik resmi."
DATASET = "Statistik Demo Wilayah Fiktif (data fiktif)"
# (region, indicator, unit, {year: value}); invented figures of invented regions.
_TABLE: tuple[tuple[str, str, str, dict[int, float]], ...] = (
    ("Kabupaten Teluk Damai", "Jumlah penduduk", "jiwa", {2022: 148_210, 2023: 150_075, 2024: 152_340}),
    ("Kota Bukit Asri", "Jumlah penduduk", "jiwa", {2022: 96_480, 2023: 97_915, 2024: 99_102}),
    ("Kabupaten Teluk Damai", "Persentase penduduk miskin", "persen", {2022: 13.8, 2023: 13.1, 2024: 12.6}),
    ("Kota Bukit Asri", "Persentase penduduk miskin", "persen", {2022: 9.4, 2023: 9.0, 2024: 8.7}),
    ("Kabupaten Teluk Damai", "Tingkat pengangguran terbuka", "persen", {2022: 6.2, 2023: 5.9, 2024: 5.5}),
    ("Kota Bukit Asri", "Tingkat pengangguran terbuka", "persen", {2022: 7.1, 2023: 6.8, 2024: 6.4}),
)
_STOP = frozenset("berapa di ke dari yang dan pada tahun kabupaten kota apa".split())


class Observation(BaseModel):
    wilayah: str
    indikator: str
    tahun: int
    nilai: float | int
    satuan: str


class StatistikResult(BaseModel):
    dataset: str
    keterangan: str
    records: list[Observation]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[0-9a-z]+", text.lower()))


def search(query: str, tahun: int | None = None, limit: int = 10) -> StatistikResult:
    """The records of the indicators sharing the most words with the query (of the regions it names, when it
    names any), for ``tahun`` when given."""
    asked = _words(query) - _STOP
    named = asked & ({w for region, *_ in _TABLE for w in _words(region)} - _STOP)
    rows = [row for row in _TABLE if not named or named & _words(row[0])]
    scores = [len(asked & _words(indicator)) for _, indicator, _, _ in rows]
    best = max(scores, default=0)
    records = [
        Observation(wilayah=region, indikator=indicator, tahun=year, nilai=value, satuan=unit)
        for (region, indicator, unit, values), score in zip(rows, scores, strict=True)
        if best and score == best
        for year, value in sorted(values.items())
        if tahun is None or year == tahun
    ]
    return StatistikResult(dataset=DATASET, keterangan=NOTE, records=records[:limit])


def build_server() -> MCPServer:
    server: MCPServer = MCPServer(
        "aceh-rag-demo-statistik", instructions=f"Statistik wilayah fiktif. {NOTE}", log_level="WARNING"
    )

    @server.tool(title="Cari statistik demo (fiktif)")
    def cari_statistik(query: str, tahun: int | None = None) -> StatistikResult:
        """Cari indikator statistik wilayah FIKTIF (penduduk, kemiskinan, pengangguran), opsional setahun."""
        return search(query, tahun)

    @server.tool(title="Daftar indikator demo")
    def daftar_indikator() -> list[str]:
        """Nama indikator yang tersedia (data fiktif)."""
        return sorted({indicator for _, indicator, _, _ in _TABLE})

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Demo MCP server of FICTIONAL statistics.")
    parser.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    server = build_server()
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
