"""The agent's writer role: passages in, segments out. Implementations: the embedded extractive writer
(CPU, no weights) and the LLM writer over an :class:`~models.base.Engine`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from models.base import CallRecord
from serve_app.answer.segments import Passage, Segment
from serve_app.budget import RequestBudget


@dataclass(slots=True)
class WriterOutput:
    """One writing round. ``segments`` is None when the output could not be read as segments at all
    (``problems`` says why); ``finish_reason`` is ``"length"`` when the output hit the token limit."""

    segments: list[Segment] | None
    record: CallRecord | None = None
    problems: list[str] = field(default_factory=list)
    finish_reason: str = "stop"
    raw: str = ""


@dataclass(frozen=True, slots=True)
class WriteRequest:
    """What one writing round is asked: the question, the passages shown (keyed), the verified history,
    the route's mode, an editorial prompt (playground), and on a regeneration the problems to fix and the
    rejected output. ``task`` is ``answer``, ``summarize`` or ``chitchat``; ``notices`` are honest tool
    notes (a live source off or unreachable)."""

    query: str
    passages: Sequence[Passage] = ()
    history: Sequence[Mapping[str, str]] = ()
    mode: str = "v2"
    editorial_prompt: str | None = None
    regenerate_feedback: list[str] | None = None
    task: str = "answer"
    notices: Sequence[str] = ()
    previous_output: str = ""


class Writer(ABC):
    """Contract: ``write`` returns a :class:`WriterOutput` (never publishes anything itself) or raises a
    :class:`~models.base.ModelError` carrying the call's record. It honours ``budget.agent_deadline()``.
    With ``regenerate_feedback`` it rewrites the whole answer, fixing the listed problems (``previous_output``
    is the rejected output, for writers that show it back to the model). ``task`` is ``answer``,
    ``summarize`` or ``chitchat``; ``notices`` are honest tool notes (a live source off or unreachable)."""

    name: str = "writer"
    max_output_tokens: int = 1024

    @abstractmethod
    async def write(self, request: WriteRequest, *, budget: RequestBudget) -> WriterOutput: ...
