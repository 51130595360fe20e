from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from models import registry
from models.json_types import JSONObject
from models.openai_engine import OpenAIEngine
from models.registry import EngineSpec, build_engine
from models.transformers_engine import TransformersEngine
from tests.models.test_transformers_engine import build_model, build_tokenizer


def test_unknown_engine_is_one_clear_sentence() -> None:
    with pytest.raises(ValueError) as info:
        EngineSpec.from_dict({"engine": "x"}, role="judge")
    assert (
        str(info.value)
        == "unknown engine 'x' for role 'judge'; expected one of embedded, openai, transformers"
    )


def test_unknown_settings_and_missing_requirements_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown engine setting"):
        EngineSpec.from_dict({"engine": "openai", "model": "m", "base_url": "http://h", "temprature": 0})
    with pytest.raises(ValueError, match="needs base_url and model"):
        EngineSpec.from_dict({"engine": "openai", "model": "m"}, role="agent")
    with pytest.raises(ValueError, match="local path"):
        EngineSpec.from_dict({"engine": "transformers"}, role="judge")


def test_embedded_builds_no_engine() -> None:
    spec = EngineSpec.from_dict({"engine": "embedded"}, role="guard")
    assert spec.kind == "embedded" and build_engine(spec) is None


def test_openai_engine_from_config(monkeypatch: pytest.MonkeyPatch) -> None:
    raw: JSONObject = {
        "engine": "openai",
        "model": "qwen",
        "base_url": "http://127.0.0.1:9/v1",
        "timeout_s": 5,
        "api_key_env": "TEST_JUDGE_KEY",
        "options": {"max_retries": 2, "top_logprobs": 5},
    }
    spec = EngineSpec.from_dict(raw, role="judge")
    with pytest.raises(ValueError, match="TEST_JUDGE_KEY"):
        build_engine(spec)
    monkeypatch.setenv("TEST_JUDGE_KEY", "sk-1")
    with pytest.raises(ValueError, match="bad options for the openai engine for role 'judge'"):
        build_engine(EngineSpec.from_dict({**raw, "options": {"retries": 2}}, role="judge"))
    engine = build_engine(spec)
    assert isinstance(engine, OpenAIEngine) and engine.model == "qwen"
    asyncio.run(engine.aclose())


def test_transformers_engine_from_config(tmp_path: Path) -> None:
    build_model().save_pretrained(tmp_path / "weights")
    build_tokenizer().save_pretrained(tmp_path / "tokenizer")
    spec = EngineSpec.from_dict(
        {
            "engine": "transformers",
            "path": str(tmp_path / "weights"),
            "model": "tiny",
            "device": "cpu",
            "dtype": "float32",
            "options": {"max_batch_size": 4, "tokenizer_path": str(tmp_path / "tokenizer")},
        },
        role="judge",
    )
    engine = build_engine(spec)
    assert isinstance(engine, TransformersEngine) and engine.model == "tiny"
    [result] = asyncio.run(engine.classify(["w1 w2"], ["yes", "no"], role="judge"))
    assert set(result.probs) == {"yes", "no"}


def test_the_option_readers_name_exactly_the_keys_the_engines_take() -> None:
    # build_engine hands the read options to the engine classes as these TypedDicts (a cast)
    assert set(registry.OPENAI_OPTION_READERS) == registry.OpenAIOptions.__optional_keys__
    assert set(registry.TRANSFORMERS_OPTION_READERS) == registry.TransformersOptions.__optional_keys__


def test_settings_and_options_of_the_wrong_type_are_refused_by_name() -> None:
    base: JSONObject = {"engine": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(ValueError, match="setting timeout_s for role 'judge' must be a number"):
        EngineSpec.from_dict({**base, "timeout_s": "5"}, role="judge")
    with pytest.raises(ValueError, match="setting options for role 'judge' must be a mapping"):
        EngineSpec.from_dict({**base, "options": [1]}, role="judge")
    bad_options: list[tuple[JSONObject, str]] = [
        ({"top_logprobs": "5"}, "option top_logprobs must be an integer"),
        ({"max_retries": True}, "option max_retries must be an integer"),
        ({"chat_template": "yes"}, "option chat_template must be true or false"),
        ({"headers": {"X-A": 1}}, "option headers must be a mapping of strings"),
        ({"max_batch_size": 4}, "unknown option\\(s\\) max_batch_size; it takes chat_template, headers"),
    ]
    prefix = "bad options for the openai engine for role 'judge': "
    for options, message in bad_options:
        spec = EngineSpec.from_dict({**base, "options": options}, role="judge")
        with pytest.raises(ValueError, match=prefix + message):
            build_engine(spec)


def test_an_http_client_reaches_the_openai_engine_only() -> None:
    import httpx

    client = httpx.AsyncClient()
    spec = EngineSpec.from_dict({"engine": "openai", "model": "m", "base_url": "http://h/v1"}, role="judge")
    engine = build_engine(spec, client=client)
    assert isinstance(engine, OpenAIEngine) and engine._client is client
    with pytest.raises(ValueError, match="an HTTP client is for the openai engine, not the embedded engine"):
        build_engine(EngineSpec.from_dict({"engine": "embedded"}), client=client)
    asyncio.run(client.aclose())
