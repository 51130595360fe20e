"""The model-backed roles (judge, framing check, writer) built from ``roles.<role>``, each engine wrapped so
its calls reach the model-call metrics, and the /healthz probe of the model servers those roles use.
:mod:`serve_app.runtime.factory` re-exports these builders."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, TypedDict, cast

from pydantic import JsonValue

if TYPE_CHECKING:  # the judge, writer and framing modules load only when their role is built
    from judge.base import Judge
    from judge.llm_judge import JudgeMode
    from models.base import Engine
    from serve_app.agent.writers.base import Writer
    from serve_app.answer.framing import FramingChecker

from serve_app.config import AppConfig, ConfigError, EngineConfig
from serve_app.config.engines import float_option, int_option


def _judge_mode(value: JsonValue) -> JudgeMode:
    if value == "labels":
        return "labels"
    if value == "json":
        return "json"
    raise ConfigError(f"roles.judge.options.mode must be 'labels' or 'json', not {value!r}.")


def _optional_int(value: JsonValue) -> int | None:
    return None if value is None else int_option(value)


class JudgeOptions(TypedDict, total=False):
    mode: JudgeMode
    threshold: float


class WriterOptions(TypedDict, total=False):
    max_output_tokens: int
    temperature: float
    max_segments: int | None
    max_segment_chars: int | None
    max_cites: int | None


# The options the LLM judge and writer read, each with the reader that gives the type its TypedDict names
# (``tests/runtime/test_llm_config.py`` holds the two tables to their TypedDicts); an option left out gets
# the object's own default.
JUDGE_OPTIONS: dict[str, Callable[[JsonValue], object]] = {"mode": _judge_mode, "threshold": float_option}
WRITER_OPTIONS: dict[str, Callable[[JsonValue], object]] = {
    "max_output_tokens": int_option,
    "temperature": float_option,
    "max_segments": _optional_int,
    "max_segment_chars": _optional_int,
    "max_cites": _optional_int,
}

# Options a role's own object reads (the judge's mode, the writer's output limit); the rest of
# ``roles.<role>.options`` goes to the engine. Without this split the judge's mode reached the engine's
# constructor and every openai judge config failed to build.
ROLE_OPTIONS: dict[str, frozenset[str]] = {
    "judge": frozenset(JUDGE_OPTIONS),
    "agent": frozenset(WRITER_OPTIONS),
    "framing": frozenset({"max_tokens"}),
    "guard": frozenset(),
}


def read_options(
    options: Mapping[str, JsonValue], readers: Mapping[str, Callable[[JsonValue], object]]
) -> dict[str, object]:
    """The role options the config gives, each read by its reader; a value its reader refuses is a
    configuration error."""
    try:
        return {name: read(options[name]) for name, read in readers.items() if name in options}
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad role option: {str(exc).rstrip('.')}.") from None


def engine_spec_dict(role: str, spec: EngineConfig) -> dict[str, JsonValue]:
    raw = spec.model_dump()
    raw["options"] = {k: v for k, v in spec.options.items() if k not in ROLE_OPTIONS[role]}
    return raw


def role_engine(role: str, spec: EngineConfig) -> Engine | None:
    from models.registry import EngineSpec, build_engine

    client = None
    if spec.engine == "openai" and spec.base_url:
        from serve_app.runtime.ray_llm import in_graph_client, is_in_graph

        if is_in_graph(spec.base_url):  # the in-graph Ray Serve LLM deployment, through its handle
            client = in_graph_client(spec.base_url, timeout_s=spec.timeout_s)
    try:
        engine = build_engine(EngineSpec.from_dict(engine_spec_dict(role, spec), role=role), client=client)
    except ValueError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None
    if engine is None:
        return None
    from models.metered import MeteredEngine
    from serve_app.metrics import observe_model_call

    return MeteredEngine(engine, observe_model_call)


def build_judge(cfg: AppConfig) -> Judge:
    from judge.rules import RuleJudge

    engine = role_engine("judge", cfg.roles.judge)
    if engine is None:
        return RuleJudge()
    from judge.llm_judge import LLMJudge

    options = cast(JudgeOptions, read_options(cfg.roles.judge.options, JUDGE_OPTIONS))
    return LLMJudge(engine, rule_veto=cfg.judge.rule_veto, **options)


def build_framing(cfg: AppConfig) -> FramingChecker:
    from serve_app.answer.framing import EmbeddedFramingChecker, LLMFramingChecker

    engine = role_engine("framing", cfg.roles.framing)
    if engine is None:
        return EmbeddedFramingChecker()
    max_tokens = cfg.roles.framing.options.get("max_tokens")
    return LLMFramingChecker(engine, max_tokens=int_option(max_tokens) if max_tokens else None)


def build_writer(cfg: AppConfig) -> Writer:
    engine = role_engine("agent", cfg.roles.agent)
    if engine is None:
        from serve_app.agent.writers.embedded import EmbeddedWriter

        return EmbeddedWriter()
    from serve_app.agent.writers.llm import LLMWriter

    options = cast(WriterOptions, read_options(cfg.roles.agent.options, WRITER_OPTIONS))
    return LLMWriter(engine, **options)


def model_health_check(cfg: AppConfig) -> Callable[[], Awaitable[dict[str, str]]] | None:
    """The /healthz probe of the model servers the roles use; None when every role is embedded."""
    from serve_app.runtime.model_servers import model_server_urls, probe_model_servers

    if not model_server_urls(cfg):
        return None

    async def probe() -> dict[str, str]:
        return await probe_model_servers(cfg)

    return probe
