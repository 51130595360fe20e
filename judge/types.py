"""What the judge receives and returns. Plain dataclasses: they cross Ray handles by pickling."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

JudgeVerdict = Literal["supported", "unsupported", "unverified"]
UnverifiedReason = Literal["deadline", "budget", "judge_unavailable", "unparseable", "disputed"]


@dataclass(frozen=True, slots=True)
class JudgePassage:
    """A cited passage, shown with the same document identity the agent saw.

    ``identity`` keys (all optional): title, type, number, year, issuer, section, legal_reference,
    and for portal results dataset, source, period, call.
    """

    key: str  # the citation key the agent saw, e.g. "P1"
    text: str
    identity: dict[str, str | int | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One segment to check against its (valid) cited passages. The judge never sees the question."""

    item_id: str
    claim: str
    passages: tuple[JudgePassage, ...]
    # What the reader sees around the segment: section heading, list lead-in, table header.
    context: str = ""
    # Wall-clock (time.time()) deadline of the request; items past it are not sent to the engine.
    deadline: float | None = None


@dataclass(frozen=True, slots=True)
class JudgeResult:
    item_id: str
    verdict: JudgeVerdict
    # Rule codes (figure_mismatch, scale_mismatch, ...) or the model's stated reason.
    reasons: tuple[str, ...] = ()
    unverified_reason: UnverifiedReason | None = None
    # (passage key, start, end) spans of the passages that grounded the verdict, where known.
    spans: tuple[tuple[str, int, int], ...] = ()
