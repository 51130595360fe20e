"""Which engine each role (agent, framing, judge, guard) uses: configuration, not code.

A role's config is a mapping such as ``{"engine": "openai", "model": "Qwen/Qwen2.5-7B-Instruct",
"base_url": "http://vllm:8000/v1", "timeout_s": 20}``; :meth:`EngineSpec.from_dict` parses it and
:func:`build_engine` builds the engine.

Engine kinds:

* ``embedded``: no model at all. :func:`build_engine` returns ``None`` and the integrator builds the role's
  deterministic implementation instead (rule judge, extractive agent, deterministic framing check,
  pattern guard), so the product runs on a CPU with no weights and no network.
* ``openai``: an OpenAI-compatible server. This is how vLLM is used in production (``vllm serve`` or a Ray
  Serve LLM deployment's OpenAI app); there is deliberately no in-process vLLM engine.
* ``transformers``: a local causal LM loaded with torch from ``path`` (never downloaded).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict, cast, get_args

from models.base import Engine
from models.json_types import JSON, JSONValue

if TYPE_CHECKING:
    import httpx

EngineKind = Literal["embedded", "openai", "transformers"]
ENGINE_KINDS: tuple[str, ...] = get_args(EngineKind)


class OpenAIOptions(TypedDict, total=False):
    """The options of the openai engine (keyword arguments of ``OpenAIEngine``)."""

    max_retries: int
    headers: dict[str, str] | None
    top_logprobs: int
    schema_name: str
    chat_template: bool


class TransformersOptions(TypedDict, total=False):
    """The options of the transformers engine (keyword arguments of ``TransformersEngine.from_path``)."""

    max_batch_size: int
    tokenizer_path: str | None


class _Fields:
    """Typed reads of a config mapping's values (``default`` when the name is absent); a value of another
    type is one clear ValueError."""

    def __init__(self, raw: JSON, what: str) -> None:
        self.raw = raw
        self.what = what  # e.g. "setting {name} for role 'judge'"

    def _bad(self, name: str, expected: str) -> ValueError:
        return ValueError(f"{self.what.format(name=name)} must be {expected}, not {self.raw[name]!r}")

    def text(self, name: str, default: str = "") -> str:
        value = self.raw.get(name, default)
        if not isinstance(value, str):
            raise self._bad(name, "a string")
        return value

    def optional_text(self, name: str, default: str | None = None) -> str | None:
        value = self.raw.get(name, default)
        if value is not None and not isinstance(value, str):
            raise self._bad(name, "a string")
        return value

    def integer(self, name: str, default: int = 0) -> int:
        value = self.raw.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad(name, "an integer")
        return value

    def number(self, name: str, default: float = 0.0) -> float:
        value = self.raw.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._bad(name, "a number")
        return float(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.raw.get(name, default)
        if not isinstance(value, bool):
            raise self._bad(name, "true or false")
        return value

    def mapping(self, name: str) -> dict[str, JSONValue]:
        value = self.raw.get(name, {})
        if not isinstance(value, Mapping):
            raise self._bad(name, "a mapping")
        return dict(value)

    def text_mapping(self, name: str) -> dict[str, str] | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            raise self._bad(name, "a mapping of strings")
        return {k: str(v) for k, v in value.items()}


@dataclass(slots=True)
class EngineSpec:
    """One role's engine and its parameters. ``options`` holds engine-specific extras, checked when the
    engine is built: :class:`OpenAIOptions`, :class:`TransformersOptions`."""

    kind: EngineKind
    model: str = ""
    base_url: str | None = None
    path: str | None = None
    api_key_env: str | None = None  # the name of the environment variable holding the key, never the key
    timeout_s: float = 30.0
    device: str = "auto"
    dtype: str = "auto"
    options: dict[str, JSONValue] = field(default_factory=dict)
    role: str = ""

    @classmethod
    def from_dict(cls, raw: JSON, *, role: str = "") -> EngineSpec:
        """Parse a role's config; the kind is read from ``engine`` (or ``kind``)."""
        data = dict(raw)
        kind = data.pop("engine", None) or data.pop("kind", None)
        where = f" for role '{role}'" if role else ""
        if kind not in ENGINE_KINDS:
            raise ValueError(f"unknown engine '{kind}'{where}; expected one of {', '.join(ENGINE_KINDS)}")
        unknown = sorted(set(data) - _SETTINGS)
        if unknown:
            raise ValueError(f"unknown engine setting(s) {', '.join(unknown)}{where}")
        spec = cls(kind=cast(EngineKind, kind), role=role)  # every setting at its default, then those given
        read = _Fields(data, "setting {name}" + where)
        spec.model = read.text("model", spec.model)
        spec.base_url = read.optional_text("base_url", spec.base_url)
        spec.path = read.optional_text("path", spec.path)
        spec.api_key_env = read.optional_text("api_key_env", spec.api_key_env)
        spec.timeout_s = read.number("timeout_s", spec.timeout_s)
        spec.device = read.text("device", spec.device)
        spec.dtype = read.text("dtype", spec.dtype)
        spec.options = read.mapping("options")
        spec.validate()
        return spec

    def validate(self) -> None:
        where = f" for role '{self.role}'" if self.role else ""
        if self.kind == "openai" and not (self.base_url and self.model):
            raise ValueError(f"the openai engine{where} needs base_url and model")
        if self.kind == "transformers" and not self.path:
            raise ValueError(f"the transformers engine{where} needs a local path to the weights")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s{where} must be positive")


# The settings of a role's config besides its kind (the role is the caller's argument).
_SETTINGS = frozenset(EngineSpec.__dataclass_fields__) - {"kind", "role"}


def build_engine(spec: EngineSpec, *, client: httpx.AsyncClient | None = None) -> Engine | None:
    """The engine ``spec`` describes; ``None`` for ``embedded`` (the caller builds the deterministic role).
    ``client``: the HTTP client of an openai engine (e.g. one whose transport is a Ray Serve handle)."""
    spec.validate()
    where = f" for role '{spec.role}'" if spec.role else ""
    if client is not None and spec.kind != "openai":
        raise ValueError(f"an HTTP client is for the openai engine, not the {spec.kind} engine{where}")
    if spec.kind == "embedded":
        return None
    read = _Fields(spec.options, f"bad options for the {spec.kind} engine{where}: option {{name}}")
    if spec.kind == "openai":
        from models.openai_engine import OpenAIEngine

        return OpenAIEngine(
            base_url=cast(str, spec.base_url),
            model=spec.model,
            api_key=_api_key(spec),
            timeout_s=spec.timeout_s,
            client=client,
            **cast(OpenAIOptions, _read_options(read, spec, OPENAI_OPTION_READERS, where)),
        )
    # Imported here so that configs without a transformers role never import torch.
    from models.transformers_engine import TransformersEngine

    return TransformersEngine.from_path(
        cast(str, spec.path),
        device=spec.device,
        dtype=spec.dtype,
        model_name=spec.model,
        timeout_s=spec.timeout_s,
        **cast(TransformersOptions, _read_options(read, spec, TRANSFORMERS_OPTION_READERS, where)),
    )


# How each engine option is read (a value of another type is refused, naming it); the engine classes take
# the result as keyword arguments typed by OpenAIOptions / TransformersOptions, whose keys these tables are
# (tests/models/test_registry.py holds them together).
_Reader = Callable[["_Fields", str], object]
OPENAI_OPTION_READERS: dict[str, _Reader] = {
    "max_retries": _Fields.integer,
    "headers": _Fields.text_mapping,
    "top_logprobs": _Fields.integer,
    "schema_name": _Fields.text,
    "chat_template": _Fields.flag,
}
TRANSFORMERS_OPTION_READERS: dict[str, _Reader] = {
    "max_batch_size": _Fields.integer,
    "tokenizer_path": _Fields.optional_text,
}


def _read_options(
    read: _Fields, spec: EngineSpec, readers: Mapping[str, _Reader], where: str
) -> dict[str, object]:
    """The options ``spec`` gives, each read by its reader; an option the engine does not take is refused."""
    unknown = sorted(set(spec.options) - set(readers))
    if unknown:
        raise ValueError(
            f"bad options for the {spec.kind} engine{where}: unknown option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(readers))}"
        )
    return {name: reader(read, name) for name, reader in readers.items() if name in spec.options}


def _api_key(spec: EngineSpec) -> str | None:
    if not spec.api_key_env:
        return None
    key = os.environ.get(spec.api_key_env)
    if not key:
        where = f" for role '{spec.role}'" if spec.role else ""
        raise ValueError(f"environment variable {spec.api_key_env} (the api key{where}) is not set")
    return key
