"""open_data and bps against real local servers shaped like CKAN's action API and the BPS WebAPI
(serve_app/demo/open_data.py): records with their identity, the organisation filter, and every fault
(an error status, a CKAN failure envelope, a bad key, broken JSON, a hung server, a slow body) giving a status
and a note within the source's time, never a figure."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from serve_app.agent.tools.base import ToolContext, ToolResult
from serve_app.agent.tools.bps import BpsTool
from serve_app.agent.tools.ckan import CkanPortal, OpenDataTool
from serve_app.agent.tools.egress import EgressPolicy
from serve_app.demo.open_data import DemoServer
from tests.support.agents import FakeRetriever, port_of

ORG = "dinas-statistik-fiktif"


@pytest.fixture
def ckan() -> Iterator[DemoServer]:
    server = DemoServer("ckan").start()
    yield server
    server.stop()


@pytest.fixture
def bps() -> Iterator[DemoServer]:
    server = DemoServer("bps").start()
    yield server
    server.stop()


def _run(tool: OpenDataTool | BpsTool, query: str) -> tuple[ToolResult, float]:
    ctx = ToolContext(retriever=port_of(FakeRetriever([])), query=query, document_ids=None)
    started = time.monotonic()
    result = asyncio.run(tool.run({}, ctx))
    return result, time.monotonic() - started


def _portal(server: DemoServer, **kwargs: object) -> OpenDataTool:
    portal = CkanPortal("SatuData demo", server.url, organization=ORG, timeout_s=1.0)
    return OpenDataTool([portal], egress=EgressPolicy([server.host]), **kwargs)  # type: ignore[arg-type]


def test_ckan_records_with_their_identity_and_the_organisation_filter(ckan: DemoServer) -> None:
    result, _ = _run(_portal(ckan), "Berapa jumlah penduduk miskin Teluk Rekaan tahun 2023?")
    assert result.status == "ok"
    top = result.evidence[0]
    assert top.text == (
        "Jumlah Penduduk Miskin per Kabupaten (data fiktif) — Tabel per kabupaten: "
        "kabupaten: Teluk Rekaan; tahun: 2023; penduduk_miskin: 12.115"
    )
    assert top.identity["dataset"] == "Jumlah Penduduk Miskin per Kabupaten (data fiktif)"
    assert top.identity["source"] == "SatuData demo (127.0.0.1)" and top.identity["period"] == "2023"
    assert top.identity["call"] == "datastore_search resource_id=res-miskin-fiktif limit=100 q=2023"
    assert str(top.identity["retrieved_at"]).endswith("Z")
    search = parse_qs(urlsplit(ckan.state.requests[0]).query)
    assert search["fq"] == [f"organization:{ORG}"]
    assert not any("res-miskin-pdf" in r for r in ckan.state.requests)  # not in the datastore: never read


def test_ckan_another_organisation_finds_nothing(ckan: DemoServer) -> None:
    portal = CkanPortal("x", ckan.url, organization="dinas-lain")
    tool = OpenDataTool([portal], egress=EgressPolicy([ckan.host]))
    assert _run(tool, "penduduk miskin Teluk Rekaan 2023")[0].status == "empty"


@pytest.mark.parametrize("fault", ["error", "ckan_failure", "bad_json", "hang", "slow_body"])
def test_ckan_faults_say_unavailable_within_the_portal_time(ckan: DemoServer, fault: str) -> None:
    ckan.state.fault = fault  # type: ignore[assignment]
    ckan.state.delay_s = 3.0 if fault == "hang" else 0.02  # a slow body: ~2 KB at 20 ms a byte
    result, elapsed = _run(_portal(ckan), "penduduk miskin Teluk Rekaan 2023")
    assert (result.status, result.note, result.evidence) == ("unavailable", "open_data_unavailable", [])
    assert elapsed < 2.5


def test_one_broken_portal_does_not_hide_another(ckan: DemoServer) -> None:
    broken = DemoServer("ckan").start()
    broken.state.fault = "error"
    try:
        portals = [CkanPortal("rusak", broken.url), CkanPortal("baik", ckan.url, organization=ORG)]
        tool = OpenDataTool(portals, egress=EgressPolicy([ckan.host, broken.host]))
        result, _ = _run(tool, "penduduk miskin Bukit Karangan 2022")
        assert result.status == "ok" and "9.310" in result.evidence[0].text
    finally:
        broken.stop()


def _bps(server: DemoServer, key: str | None = "demo-bps-key", domain: str | None = None) -> BpsTool:
    return BpsTool(server.url, api_key=key, egress=EgressPolicy([server.host]), domain=domain, timeout_s=1.0)


def test_bps_reads_the_asked_year_with_its_identity(bps: DemoServer) -> None:
    result, _ = _run(_bps(bps), "Berapa tingkat pengangguran terbuka Bukit Karangan tahun 2023?")
    texts = [e.text for e in result.evidence]
    assert texts[0] == "Tingkat Pengangguran Terbuka (data fiktif) — Bukit Karangan, tahun 2023: 4,61 Persen"
    assert all("2022" not in t for t in texts)
    ident = result.evidence[0].identity
    assert ident["source"] == "BPS WebAPI (domain 1100)" and ident["period"] == "2023"
    assert str(ident["call"]).startswith("list/model/data domain=1100 var=9001")
    assert "demo-bps-key" not in str(ident["call"])  # the key is a credential, never shown


def test_bps_without_a_key_or_with_a_bad_one(bps: DemoServer) -> None:
    assert _run(_bps(bps, key=None), "pengangguran 2023")[0].note == "bps_disabled"
    assert bps.state.requests == []
    assert _run(_bps(bps, key="wrong"), "pengangguran 2023")[0].note == "bps_unavailable"
    assert _run(_bps(bps, domain="3100"), "pengangguran 2023")[0].status == "empty"


@pytest.mark.parametrize("fault", ["error", "bad_json", "hang", "slow_body"])
def test_bps_faults_say_unavailable_within_its_time(bps: DemoServer, fault: str) -> None:
    bps.state.fault = fault  # type: ignore[assignment]
    bps.state.delay_s = 3.0 if fault == "hang" else 0.02
    result, elapsed = _run(_bps(bps), "pengangguran terbuka 2023")
    assert (result.status, result.note, result.evidence) == ("unavailable", "bps_unavailable", [])
    assert elapsed < 2.5
