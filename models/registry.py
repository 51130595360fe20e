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
from dataclasses import dataclass, field, fields
from typing import Any, Literal, cast, get_args

from models.base import Engine

EngineKind = Literal["embedded", "openai", "transformers"]
ENGINE_KINDS: tuple[str, ...] = get_args(EngineKind)


@dataclass(slots=True)
class EngineSpec:
    """One role's engine and its parameters. ``options`` holds engine-specific extras: openai:
    ``max_retries``, ``headers``, ``top_logprobs``, ``schema_name``; transformers: ``max_batch_size``,
    ``tokenizer_path``."""

    kind: EngineKind
    model: str = ""
    base_url: str | None = None
    path: str | None = None
    api_key_env: str | None = None  # the name of the environment variable holding the key, never the key
    timeout_s: float = 30.0
    device: str = "auto"
    dtype: str = "auto"
    options: dict[str, Any] = field(default_factory=dict)
    role: str = ""

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, role: str = "") -> EngineSpec:
        """Parse a role's config; the kind is read from ``engine`` (or ``kind``)."""
        data = dict(raw)
        kind = data.pop("engine", None) or data.pop("kind", None)
        where = f" for role '{role}'" if role else ""
        if kind not in ENGINE_KINDS:
            raise ValueError(f"unknown engine '{kind}'{where}; expected one of {', '.join(ENGINE_KINDS)}")
        known = {f.name for f in fields(cls)} - {"kind", "role"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown engine setting(s) {', '.join(unknown)}{where}")
        spec = cls(kind=cast(EngineKind, kind), role=role, **data)
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


def build_engine(spec: EngineSpec) -> Engine | None:
    """The engine ``spec`` describes; ``None`` for ``embedded`` (the caller builds the deterministic role)."""
    spec.validate()
    try:
        return _build(spec)
    except TypeError as exc:  # an option the engine does not take
        where = f" for role '{spec.role}'" if spec.role else ""
        raise ValueError(f"bad options for the {spec.kind} engine{where}: {exc}") from exc


def _build(spec: EngineSpec) -> Engine | None:
    if spec.kind == "embedded":
        return None
    if spec.kind == "openai":
        from models.openai_engine import OpenAIEngine

        return OpenAIEngine(
            base_url=cast(str, spec.base_url),
            model=spec.model,
            api_key=_api_key(spec),
            timeout_s=spec.timeout_s,
            **spec.options,
        )
    # Imported here so that configs without a transformers role never import torch.
    from models.transformers_engine import TransformersEngine

    return TransformersEngine.from_path(
        cast(str, spec.path),
        device=spec.device,
        dtype=spec.dtype,
        model_name=spec.model,
        timeout_s=spec.timeout_s,
        **spec.options,
    )


def _api_key(spec: EngineSpec) -> str | None:
    if not spec.api_key_env:
        return None
    key = os.environ.get(spec.api_key_env)
    if not key:
        where = f" for role '{spec.role}'" if spec.role else ""
        raise ValueError(f"environment variable {spec.api_key_env} (the api key{where}) is not set")
    return key
