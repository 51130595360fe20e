"""The one protocol every model engine implements, and the records each call leaves behind.

Contract of :class:`Engine` (every implementation, fakes included):

* ``generate`` returns one :class:`Generation` or raises a :class:`ModelError` subclass. With
  ``json_schema`` the engine asks the server for structured output and ``Generation.parsed`` holds the
  decoded JSON object; text that does not decode raises :class:`ModelOutputError`, never a guess. Output
  cut at ``max_tokens`` comes back undecoded with ``finish_reason == "length"``.
* ``classify`` scores each prompt's *first generated token* over ``labels`` and returns one
  :class:`Classification` per prompt, in order, with probabilities renormalised over the labels. A label
  missing from the engine's top-k gets the engine's floor probability, never a silent 0.
* Every call honours ``deadline`` (``time.time()`` seconds): past it the call raises :class:`ModelTimeout`
  without sending, and an in-flight call is cancelled when it passes.
* Every call, failed or not, yields a :class:`CallRecord` (tokens, latency) through ``Generation.record``,
  ``Classification.record`` or the raised error's ``record`` so the request can charge its budget and
  publish ``model_call_log``.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, runtime_checkable

from models.json_types import JSON, JSONObject


@dataclass(slots=True)
class CallRecord:
    role: str
    engine: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    ok: bool = True
    error: str | None = None  # a fixed error code (timeout, unavailable, bad_output), never server text
    note: str | None = None  # a fixed code about the call, e.g. "recheck_skipped:deterministic_judge"

    def to_dict(self) -> JSONObject:
        out: JSONObject = {
            "role": self.role,
            "engine": self.engine,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_ms": round(self.latency_ms, 3),
            "ok": self.ok,
            "error": self.error,
        }
        if self.note is not None:
            out["note"] = self.note
        return out


@dataclass(slots=True)
class Generation:
    text: str
    record: CallRecord
    parsed: Any | None = None  # the decoded JSON when a json_schema was given
    finish_reason: str = "stop"  # "stop" | "length"


@dataclass(slots=True)
class Classification:
    probs: dict[str, float]
    record: CallRecord
    label: str = field(init=False)

    def __post_init__(self) -> None:
        self.label = max(self.probs, key=lambda k: self.probs[k])


class ModelError(Exception):
    """Base of every engine failure. ``code`` is fixed and safe to show; ``record`` is the call's record."""

    code = "model_error"

    def __init__(self, message: str = "", *, record: CallRecord | None = None) -> None:
        super().__init__(message or self.code)
        self.record = record

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r})"


class ModelTimeout(ModelError):
    code = "timeout"


class ModelUnavailable(ModelError):
    code = "unavailable"


class ModelOutputError(ModelError):
    code = "bad_output"


def deadline_left(deadline: float | None) -> float | None:
    """Seconds left before ``deadline`` (None = no deadline); raises ModelTimeout when already past."""
    if deadline is None:
        return None
    left = deadline - time.time()
    if left <= 0:
        raise ModelTimeout("deadline passed before the call")
    return left


@dataclass(frozen=True, slots=True)
class GenArgs:
    """The keyword arguments of one ``generate`` call, typed once: engines implement ``_generate`` on it
    instead of each repeating the public signature (and its defaults) of :meth:`Engine.generate`."""

    role: str
    json_schema: JSON | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    deadline: float | None = None

    def as_kwargs(self) -> dict[str, Any]:
        """The request as ``generate``'s keyword arguments (a wrapper passes them on to its inner engine)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class Engine(ABC):
    """A model behind one small protocol. ``name`` is the engine kind, ``model`` the model it serves."""

    name: str = "engine"
    model: str = ""

    async def generate(
        self,
        messages: list[dict[str, str]],
        *,
        role: str,
        json_schema: JSON | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        deadline: float | None = None,
    ) -> Generation:
        """Chat-style generation; ``messages`` are ``{"role": "system"|"user"|"assistant", "content"}``."""
        request = GenArgs(role, json_schema, max_tokens, temperature, deadline)
        return await self._generate(messages, request)

    @abstractmethod
    async def _generate(self, messages: list[dict[str, str]], request: GenArgs) -> Generation:
        """The engine's own generation for :meth:`generate` (same contract, the arguments in ``request``)."""

    @abstractmethod
    async def classify(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None = None
    ) -> list[Classification]:
        """First-token label probabilities for each prompt (one batched call where the engine can)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections or GPU memory."""


@runtime_checkable
class PairClassifier(Protocol):
    """An engine that can also score ``(prefix, suffix)`` pairs, computing a shared prefix once (the
    transformers engine); same contract as :meth:`Engine.classify` on ``prefix + suffix``."""

    async def classify_pairs(
        self, pairs: list[tuple[str, str]], labels: list[str], *, role: str, deadline: float | None = None
    ) -> list[Classification]: ...
