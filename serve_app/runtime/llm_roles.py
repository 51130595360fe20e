"""The model-backed roles (judge, framing check, writer) built from ``roles.<role>``, each engine wrapped so
its calls reach the model-call metrics, and the /healthz probe of the model servers those roles use.
:mod:`serve_app.runtime.factory` re-exports these builders."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the judge modules load only when a judge is built
    from judge.base import Judge

from serve_app.config import AppConfig, ConfigError, EngineConfig
from serve_app.config.engines import int_option


def _given(value: Any) -> Any:
    return value


# The options the LLM judge and writer read, each with how its value is read (``_given``: as written); an
# option left out gets the object's own default.
JUDGE_OPTIONS: dict[str, Callable[[Any], Any]] = {"mode": _given, "threshold": float}
WRITER_OPTIONS: dict[str, Callable[[Any], Any]] = {
    "max_output_tokens": int,
    "temperature": float,
    "max_segments": _given,
    "max_segment_chars": _given,
    "max_cites": _given,
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


def read_options(options: dict[str, Any], readers: dict[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """The role options the config gives, each read by its reader."""
    return {name: read(options[name]) for name, read in readers.items() if name in options}


def engine_spec_dict(role: str, spec: EngineConfig) -> dict[str, Any]:
    raw = spec.model_dump()
    raw["options"] = {k: v for k, v in spec.options.items() if k not in ROLE_OPTIONS[role]}
    return raw


def role_engine(role: str, spec: EngineConfig) -> Any:
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

    return LLMJudge(
        engine, rule_veto=cfg.judge.rule_veto, **read_options(cfg.roles.judge.options, JUDGE_OPTIONS)
    )


def build_framing(cfg: AppConfig) -> Any:
    from serve_app.answer.framing import EmbeddedFramingChecker, LLMFramingChecker

    engine = role_engine("framing", cfg.roles.framing)
    if engine is None:
        return EmbeddedFramingChecker()
    max_tokens = cfg.roles.framing.options.get("max_tokens")
    return LLMFramingChecker(engine, max_tokens=int_option(max_tokens) if max_tokens else None)


def build_writer(cfg: AppConfig) -> Any:
    engine = role_engine("agent", cfg.roles.agent)
    if engine is None:
        from serve_app.agent.writers.embedded import EmbeddedWriter

        return EmbeddedWriter()
    from serve_app.agent.writers.llm import LLMWriter

    return LLMWriter(engine, **read_options(cfg.roles.agent.options, WRITER_OPTIONS))


def model_health_check(cfg: AppConfig) -> Callable[[], Awaitable[dict[str, str]]] | None:
    """The /healthz probe of the model servers the roles use; None when every role is embedded."""
    from serve_app.runtime.model_servers import model_server_urls, probe_model_servers

    if not model_server_urls(cfg):
        return None

    async def probe() -> dict[str, str]:
        return await probe_model_servers(cfg)

    return probe
