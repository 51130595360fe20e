"""``/query/v2`` answers a statistics question from each live source of configs/demo_sources.yaml (the
fictional SQLite database, the local CKAN and BPS servers): each figure cites the record read with its
identity, and is ``supported`` against it; a computed total is supported because it equals the judge's
recomputation from the rows it cites. With configs/default.yaml no live tool runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from serve_app.config import load_config
from serve_app.demo.open_data import DemoServer
from tests.conftest import API_KEY, REPO
from tests.support.service import client_for

LIVE = {"sql_query", "open_data", "bps"}


@pytest.fixture(scope="module")
def live_client(
    demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    tmp = tmp_path_factory.mktemp("live")
    ckan, bps = DemoServer("ckan").start(), DemoServer("bps").start()
    env = {
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(demo_index),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'aceh.db'}",
    }
    cfg = load_config(str(REPO / "configs" / "demo_sources.yaml"), env=env)
    assert cfg.sources.bps is not None
    sources = cfg.sources.model_copy(
        update={  # the demo's servers, on the free ports they got here
            "egress_allowlist": [ckan.host, bps.host],
            "ckan": [cfg.sources.ckan[0].model_copy(update={"base_url": ckan.url})],
            "bps": cfg.sources.bps.model_copy(update={"base_url": bps.url}),
        }
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEH_BPS_KEY", "demo-bps-key")
        with client_for(cfg.model_copy(update={"sources": sources}), demo_retriever) as client:
            yield client
    ckan.stop()
    bps.stop()


def _ask(client: TestClient, query: str) -> dict[str, Any]:
    response = client.post("/query/v2", json={"query": query}, headers={"X-API-Key": API_KEY})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _supported(client: TestClient, query: str, needle: str) -> tuple[dict[str, Any], ...]:
    """The answer to ``query``, its claim holding ``needle`` (asserted ``supported``) and that claim's one
    citation: what every live source's test starts from."""
    body = _ask(client, query)
    claim = next(c for c in body["claims"] if needle in c["text"])
    assert claim["verdict"] == "supported", claim
    (key,) = claim["citation_keys"]
    citation = next(c for c in body["citations"] if c["citation_key"] == key)
    return body, claim, citation


def test_sql_total_is_supported_against_the_rows_it_came_from(live_client: TestClient) -> None:
    body, _, citation = _supported(live_client, "Berapa total penduduk Teluk Rekaan tahun 2023?", "87.395")
    assert body["tool"] == "sql_query"
    assert citation["dataset"] == "penduduk_kecamatan" and citation["source"] == "SQL stats.sqlite"
    assert citation["period"] == "2023" and citation["call"].startswith("SELECT * FROM penduduk_kecamatan")
    assert citation["retrieved_at"].endswith("Z")
    computed = citation["computed_from"]
    assert computed["operation"] == "sum" and computed["column"] == "penduduk"
    assert sorted(r["penduduk"] for r in computed["rows"]) == ["17.415", "28.730", "41.250"]


def test_sql_count_is_supported_against_the_rows_it_came_from(live_client: TestClient) -> None:
    question = "Berapa jumlah kecamatan di Teluk Rekaan tahun 2023?"
    _, claim, citation = _supported(live_client, question, "Banyaknya kecamatan")
    assert claim["text"].endswith("adalah 3.")
    assert citation["computed_from"]["operation"] == "count" and len(citation["computed_from"]["rows"]) == 3


def test_ckan_figure_is_supported_against_its_record(live_client: TestClient) -> None:
    question = "Berapa jumlah penduduk miskin Bukit Karangan tahun 2022?"
    _, _, citation = _supported(live_client, question, "9.310")
    assert citation["dataset"] == "Jumlah Penduduk Miskin per Kabupaten (data fiktif)"
    assert citation["source"].startswith("SatuData demo (fiktif)") and citation["period"] == "2022"
    assert citation["call"] == "datastore_search resource_id=res-miskin-fiktif limit=100 q=2022"


def test_bps_figure_is_supported_against_its_record(live_client: TestClient) -> None:
    question = "Berapa tingkat pengangguran terbuka Bukit Karangan tahun 2023?"
    body, _, citation = _supported(live_client, question, "4,61")
    assert body["tool"] == "bps"
    assert citation["source"] == "BPS WebAPI (domain 1100)" and citation["period"] == "2023"
    assert citation["call"].startswith("list/model/data domain=1100 var=9001")


def test_default_config_runs_no_live_tool(demo_client: TestClient) -> None:
    body = _ask(demo_client, "Berapa tingkat pengangguran terbuka Bukit Karangan tahun 2023?")
    assert not LIVE & {t["tool"] for t in body.get("tool_call_audit", [])}
    assert body["tool"] not in LIVE
