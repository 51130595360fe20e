"""The model as a Ray Serve LLM deployment inside the graph (configs/llm-cpu-ray.yaml): one real start of the
graph with Ray Serve LLM's LLMServer (vLLM for CPUs, SmolLM2-135M-Instruct) bound next to its deployments.

It skips only when vLLM's environment has no Ray (``make vllm`` installs it); ACEH_VLLM_PYTHON names another
interpreter. The model is tiny: the assertions check the path (handle transport, logprob label scoring,
structured output, health), never that its verdicts are right."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import API_KEY, REPO
from tests.contract.checks import assert_v2_body
from tests.support.net import free_port, wait_healthy

pytestmark = [pytest.mark.ray, pytest.mark.llm, pytest.mark.slow]

CONFIG = REPO / "configs" / "llm-cpu-ray.yaml"
START_TIMEOUT_S = 600.0
MODEL_URL = "ray-serve-llm://smollm2/v1"


@pytest.fixture(scope="module")
def graph(demo_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import ray
    from ray import serve

    from serve_app.config import ConfigError, load_config
    from serve_app.runtime.ray_llm import check_environment
    from serve_app.runtime.serve_runner import start_serve

    tmp = tmp_path_factory.mktemp("rayllm")
    env = {
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(demo_index),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'aceh.db'}",
    }
    cfg = load_config(str(CONFIG), env=env)
    assert cfg.ray_serve_llm is not None
    spec = cfg.ray_serve_llm.model_copy(
        update={"python": os.environ.get("ACEH_VLLM_PYTHON", cfg.ray_serve_llm.python), "max_num_seqs": 32}
    )
    try:
        check_environment(spec)
    except ConfigError as exc:
        if "needs Ray in vLLM's environment" in str(exc):
            pytest.skip(str(exc))
        raise
    # A loaded 2-core host writes a few tokens a second: generous timeouts, a short answer.
    roles = cfg.roles.model_copy(
        update={
            "agent": cfg.roles.agent.model_copy(
                update={
                    "timeout_s": 150.0,
                    "options": {
                        "max_output_tokens": 160,
                        "max_segments": 2,
                        "max_segment_chars": 120,
                        "max_cites": 2,
                    },
                }
            ),
            "framing": cfg.roles.framing.model_copy(update={"timeout_s": 90.0}),
            "judge": cfg.roles.judge.model_copy(update={"timeout_s": 90.0}),
        }
    )
    budgets = cfg.budgets.model_copy(update={"deadline_s": 300})
    port = free_port()
    cfg = cfg.model_copy(update={"port": port, "ray_serve_llm": spec, "roles": roles, "budgets": budgets})
    started = time.monotonic()
    try:
        start_serve(cfg, num_cpus=2)
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, timeout_s=START_TIMEOUT_S)
        yield {"base": base, "config": cfg, "start_s": time.monotonic() - started}
    finally:
        serve.shutdown()
        ray.shutdown()


def test_query_v2_through_the_in_graph_model(graph: dict[str, Any]) -> None:
    base = graph["base"]
    print(f"graph with the in-graph LLM healthy after {graph['start_s']:.0f} s")
    health = httpx.get(base + "/healthz", timeout=30).json()
    assert health["model_servers"] == {MODEL_URL: "ok"}, health
    started = time.monotonic()
    response = httpx.post(
        base + "/query/v2",
        json={"query": "Berapa anggaran pendidikan Aceh tahun 2023?", "include_provenance": True},
        headers={"X-API-Key": API_KEY},
        timeout=330,
    )
    print(f"/query/v2 answered {response.status_code} in {time.monotonic() - started:.1f} s")
    assert response.status_code == 200, response.text
    body = response.json()
    if os.environ.get("ACEH_DUMP"):
        Path(os.environ["ACEH_DUMP"]).write_text(response.text)
    assert_v2_body(body, opt_in=["model_call_log"])
    assert body["model"]["agent"]["engine"] == "openai" and body["model"]["judge"]["engine"] == "openai"
    calls = body["model_call_log"]
    assert calls and all(c["engine"] == "openai" and c["model"] == "smollm2" for c in calls), calls
    assert any(c["role"] == "agent" and c["ok"] for c in calls), calls  # structured output through the handle
    metrics = httpx.get(base + "/metrics", timeout=30).text
    assert 'aceh_model_calls_total{engine="openai",outcome="ok",role="agent"}' in metrics
