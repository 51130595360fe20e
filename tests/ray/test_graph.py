"""The real Ray Serve graph over HTTP: started once per placement with fractional CPUs.

Two placements, each test against both: every role its own deployment (``split``, as on a cluster), and the
default configuration (every role inside each of two Ingress replicas)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import API_KEY, make_config
from tests.support.net import free_port, wait_healthy

pytestmark = [pytest.mark.ray, pytest.mark.slow]

VOLATILE = {
    "trace_id",
    "conversation_id",
    "message_id",
    "created_at",
    "latency_ms",
    "model_call_log",
    "started_at",
    "duration_ms",
    "finished_at",
    "call_id",
}


PLACEMENTS: dict[str, list[str] | None] = {"split": [], "default": None}  # None: as configs/default.yaml


@pytest.fixture(scope="module", params=sorted(PLACEMENTS))
def graph(
    request: pytest.FixtureRequest, demo_index: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    import ray
    from ray import serve

    from serve_app.runtime.serve_runner import start_serve

    port = free_port()
    cfg = make_config(tmp_path_factory.mktemp("graph"), demo_index)
    colocate = PLACEMENTS[request.param]
    if colocate is not None:
        cfg = cfg.model_copy(update={"serve": cfg.serve.model_copy(update={"colocate": colocate})})
    cfg = cfg.model_copy(update={"port": port})
    try:
        start_serve(cfg, num_cpus=2)
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, timeout_s=120)
        yield {"base": base, "config": cfg}
    finally:
        serve.shutdown()
        ray.shutdown()


def _post(graph: dict[str, Any], path: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
    headers = {"X-API-Key": API_KEY, **kw.pop("headers", {})}
    return httpx.post(graph["base"] + path, json=body, headers=headers, timeout=60, **kw)


def _stable(body: Any) -> Any:
    if isinstance(body, dict):
        return {k: _stable(v) for k, v in body.items() if k not in VOLATILE}
    if isinstance(body, list):
        return [_stable(v) for v in body]
    if isinstance(body, float):
        return round(body, 6)
    return body


def test_health_metrics_openapi(graph: dict[str, Any]) -> None:
    health = httpx.get(graph["base"] + "/healthz", timeout=10)
    assert health.status_code == 200
    assert set(health.json()["deployments"]) == {
        "Ingress",
        "Guard",
        "Retriever",
        "Agent",
        "Annotator",
        "JudgePool",
    }
    assert httpx.get(graph["base"] + "/openapi.json", timeout=10).json()["openapi"].startswith("3.")
    _post(graph, "/query/v2", {"query": "Berapa anggaran pendidikan Aceh tahun 2023?"})
    metrics = httpx.get(graph["base"] + "/metrics", timeout=10).text
    assert 'aceh_http_requests_total{route="/query/v2",status="200"}' in metrics
    assert _sample(metrics, "aceh_judge_batch_size_count") >= 1
    if not graph["config"].serve.is_colocated("Agent"):  # another process's metrics reach the scrape
        agent_runs = 'aceh_deployment_call_duration_seconds_count{deployment="Agent",method="run"}'
        assert _sample(metrics, agent_runs) >= 1


def test_the_reference_client_is_served_without_credentials(graph: dict[str, Any]) -> None:
    """/ui/ through Ray's proxy as in process: open, with its policy; the API it calls still needs the key."""
    from serve_app.wire.ui import CONTENT_SECURITY_POLICY

    for path, kind in (("/ui/", "text/html"), ("/ui/app.js", "text/javascript")):
        response = httpx.get(graph["base"] + path, timeout=10)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith(kind)
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    unauthenticated = httpx.post(graph["base"] + "/query/v2/stream", json={"query": "Halo"}, timeout=10)
    assert unauthenticated.status_code == 401


def _sample(metrics: str, name: str) -> float:
    """The value of one exposition line (0 when absent)."""
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_every_ingress_replica(graph: dict[str, Any]) -> None:
    """Two Ingress replicas (the default) each count their own requests; /metrics, served by either one,
    shows the sum."""
    name = 'aceh_http_requests_total{route="/query/v2",status="200"}'
    before = _sample(httpx.get(graph["base"] + "/metrics", timeout=10).text, name)
    for _ in range(8):
        r = _post(graph, "/query/v2", {"query": "Berapa anggaran pendidikan Aceh tahun 2023?"})
        assert r.status_code == 200
    for _ in range(4):  # whichever replica answers the scrape
        after = _sample(httpx.get(graph["base"] + "/metrics", timeout=10).text, name)
        assert after - before == 8


def test_placement_decides_which_deployments_exist(graph: dict[str, Any]) -> None:
    from ray import serve

    running = set(serve.status().applications["aceh-rag"].deployments)
    colocated = set(graph["config"].serve.colocate)
    assert running == {"Ingress", "Guard", "Retriever", "Agent", "Annotator", "JudgePool"} - colocated


def test_auth_is_enforced(graph: dict[str, Any]) -> None:
    r = httpx.post(graph["base"] + "/query/v2", json={"query": "x"}, timeout=10)
    assert r.status_code == 401
    r = httpx.post(
        graph["base"] + "/query/v2", json={"query": "x"}, headers={"X-API-Key": "wrong"}, timeout=10
    )
    assert r.status_code == 401


def test_request_id_comes_back_once_behind_rays_proxy(graph: dict[str, Any]) -> None:
    """Ray's proxy echoes the request's X-Request-ID; the ingress adds its own only when it replaced it, and
    the proxy middleware keeps that one alone."""
    sent = _post(graph, "/search", {"query": "pendidikan"}, headers={"X-Request-ID": "graph-req-1"})
    assert sent.status_code == 200 and sent.headers.get_list("x-request-id") == ["graph-req-1"]
    made = _post(graph, "/search", {"query": "pendidikan"})
    assert len(made.headers.get_list("x-request-id")) == 1
    bad = _post(graph, "/search", {"query": "pendidikan"}, headers={"X-Request-ID": "bad id"})
    ours = bad.headers.get_list("x-request-id")
    assert len(ours) == 1 and re.fullmatch(r"[0-9a-f]{32}", ours[0])  # the id in our log lines


def test_answers_name_the_index_version_they_read(graph: dict[str, Any]) -> None:
    version = httpx.get(graph["base"] + "/healthz", timeout=10).json()["index_version"]
    assert re.fullmatch(r"[0-9a-f]{16}", version)
    for path, body in [("/search", {"query": "pendidikan"}), ("/query/v2", {"query": "anggaran pendidikan"})]:
        r = _post(graph, path, body)
        assert r.status_code == 200 and r.headers["x-index-version"] == version, path


def test_query_v2_answers_with_supported_figures(graph: dict[str, Any]) -> None:
    r = _post(graph, "/query/v2", {"query": "Berapa anggaran pendidikan Aceh tahun 2023?"})
    assert r.status_code == 200
    body = r.json()
    assert body["schema"] == "annotate-v2"
    supported = [c for c in body["claims"] if c["verdict"] == "supported"]
    assert supported and any("871.667.219.294" in c["text"] for c in supported)
    for c in body["claims"] + body["framing"]:
        assert body["answer"][c["start"] : c["end"]] == c["text"]


def test_stream_over_the_graph(graph: dict[str, Any]) -> None:
    with httpx.stream(
        "POST",
        graph["base"] + "/query/v2/stream",
        json={"query": "Apa isi Pasal 7 Qanun Aceh Nomor 9 Tahun 2022?"},
        headers={"X-API-Key": API_KEY},
        timeout=60,
    ) as r:
        assert r.status_code == 200
        text = "".join(r.iter_text())
    events = [block.split("\n", 1)[0].removeprefix("event: ") for block in text.strip().split("\n\n")]
    assert events[-1] == "done" and events.count("done") == 1
    assert events.index("annotations") < events.index("answer.delta")


def test_graph_and_inprocess_pipeline_give_the_same_json(graph: dict[str, Any], demo_retriever: Any) -> None:
    import asyncio

    from serve_app.guard.auth import Principal
    from serve_app.runtime import factory
    from serve_app.wire.schemas import QueryV2Request

    cfg = graph["config"]
    pipeline = factory.build_inprocess(cfg, retriever=demo_retriever)
    for question in (
        "Berapa anggaran pendidikan Aceh tahun 2023?",
        "Berapa persen alokasi dana otonomi khusus untuk kabupaten/kota?",
    ):
        over_http = _post(graph, "/query/v2", {"query": question, "include_provenance": True}).json()
        local = asyncio.run(
            pipeline.answer(
                QueryV2Request(query=question, include_provenance=True), Principal.anonymous(), route="v2"
            )
        ).json_body()
        assert _stable(over_http) == _stable(local)


def _demo_questions() -> list[str]:
    import json

    path = Path(__file__).resolve().parents[1] / "data" / "demo_questions.jsonl"
    return [
        json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def test_contract_holds_over_http_for_every_demo_question(graph: dict[str, Any]) -> None:
    """Every invariant of CONTRACT.md, and the committed JSON Schemas, over the real graph."""
    from tests.contract.checks import assert_v1_body, assert_v2_body, parse_sse, validate_against_schema
    from tests.contract.stream_checks import assert_v2_stream

    questions = _demo_questions()
    for question in questions:
        body = _post(graph, "/query/v2", {"query": question}).json()
        assert_v2_body(body)
        validate_against_schema(body, "query_v2_response")
    for question in questions[::6]:
        with httpx.stream(
            "POST",
            graph["base"] + "/query/v2/stream",
            json={"query": question},
            headers={"X-API-Key": API_KEY},
            timeout=60,
        ) as r:
            assert r.status_code == 200
            assert_v2_stream(parse_sse("".join(r.iter_text())))
        v1 = _post(graph, "/query", {"query": question}).json()
        assert_v1_body(v1)
        validate_against_schema(v1, "query_v1_response")


def test_citation_routes_over_the_graph(graph: dict[str, Any], demo_retriever: Any) -> None:
    """The catalogue runs where the index is (the Retriever deployment when split): the same documents,
    sections and passage as the in-process retriever, and 404 for an unknown one."""
    from retrieval import catalog

    headers = {"X-API-Key": API_KEY}
    listed = httpx.get(graph["base"] + "/documents", params={"page_size": 100}, headers=headers, timeout=60)
    assert listed.status_code == 200, listed.text
    ids = [d["document_id"] for d in listed.json()["documents"]]
    assert sorted(ids) == sorted(d.document_id for d in demo_retriever.documents())
    doc = next(d for d in demo_retriever.documents() if d.identity.doc_type == "Qanun")
    view = httpx.get(f"{graph['base']}/documents/{doc.document_id}", headers=headers, timeout=60).json()
    expected = catalog.sections_of(demo_retriever.document_chunks(doc.document_id))
    assert [s["chunk_ids"] for s in view["sections"]] == [list(s.chunk_ids) for s in expected]
    chunk = demo_retriever.document_chunks(doc.document_id)[1]
    url = f"{graph['base']}/documents/{doc.document_id}/passages/{chunk.chunk_id}"
    passage = httpx.get(url, headers=headers, timeout=60).json()
    assert passage["text"] == chunk.text and passage["citation"]["chunk_id"] == chunk.chunk_id
    missing = httpx.get(graph["base"] + "/documents/no-such-document", headers=headers, timeout=60)
    assert missing.status_code == 404


def test_artifacts_are_fetched_from_any_ingress_replica(graph: dict[str, Any]) -> None:
    """The files live in the store's database: whichever Ingress replica serves the fetch has them."""
    headers = {"X-API-Key": API_KEY}
    question = "Berapa pagu Pajak Daerah dan Retribusi Daerah dalam lampiran APBA 2023?"
    body = _post(graph, "/query", {"query": question, "offer_artifacts": True}).json()
    assert {a["media_type"] for a in body["artifacts"]} == {
        "text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    }
    url = graph["base"] + body["artifacts"][0]["url"]
    statuses = {httpx.get(url, headers=headers, timeout=60).status_code for _ in range(8)}
    assert statuses == {200}
