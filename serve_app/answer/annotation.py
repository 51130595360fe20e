"""What annotate-v2 says about one answer: the claim and verdict records (as wire dicts), the
``faithfulness`` report counted from them, and what the v1 gate kept (:class:`V1Gate`). Both ``answer/``
(which builds them) and ``wire/`` (which publishes them) import this module; it imports nothing of
``serve_app`` but the request budget."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from models.json_types import JSON, JSONObject, JSONValue
from serve_app.budget import RequestBudget
from serve_app.vocabulary import UNVERIFIED_REASONS, V1RefusalReason

# What the server writes between segments: whitespace, "## ", "- ", table pipes and the separator row.
_LAYOUT_ONLY = re.compile(r"(?:\s|## |- |\|(?: -{3,} \|)*)*")


@dataclass
class Annotation:
    """What annotate-v2 says about one answer, as wire dicts (schemas.Claim, FramingSpan, Faithfulness)."""

    claims: list[JSONObject]
    framing: list[JSONObject]
    faithfulness: JSONObject
    grounding_details: list[JSONObject] = field(default_factory=list)
    memory_items: list[str] = field(default_factory=list)
    budget: RequestBudget | None = None

    def _grounding(self, name: str) -> JSONValue:
        grounding = self.faithfulness["grounding"]
        if not isinstance(grounding, Mapping):
            raise TypeError("faithfulness.grounding is not an object")
        return grounding[name]

    @property
    def claims_supported(self) -> int:
        return int(_number(self._grounding("claims_supported")))

    @property
    def claims_total(self) -> int:
        return int(_number(self._grounding("claims_total")))

    @property
    def grounding_rate(self) -> float | None:
        rate = self._grounding("grounding_rate")
        return None if rate is None else float(_number(rate))


def _number(value: JSONValue) -> int | float | str:
    """A count or rate of the report for ``int()``/``float()``; anything else fails as they would."""
    if not isinstance(value, int | float | str):
        raise TypeError(f"{value!r} is no number")
    return value


def unlocated_pieces(answer: str, covered: Sequence[tuple[int, int]]) -> int:
    """Runs of ``answer`` outside every ``(start, end)`` span that hold more than server layout."""
    pieces, position = 0, 0
    for start, end in sorted(covered) + [(len(answer), len(answer))]:
        if start > position and not _LAYOUT_ONLY.fullmatch(answer[position:start]):
            pieces += 1
        position = max(position, end)
    return pieces


def _grounding(supported: int, total: int) -> JSONObject:
    return {
        "claims_supported": supported,
        "claims_total": total,
        "grounding_rate": supported / total if total else None,
    }


def faithfulness_report(
    claims: Sequence[JSON],
    *,
    framing_total: int,
    unlocated_total: int,
    judge_status: str,
    framing_check: str,
    checked: bool = True,
) -> JSONObject:
    """The wire ``faithfulness`` object counted from claim dicts (``checked`` appears only when False)."""
    verdicts = Counter(c["verdict"] for c in claims)
    reasons = Counter(c["unverified_reason"] for c in claims if c["verdict"] == "unverified")
    total = len(claims) - verdicts["from_conversation"]
    supported = verdicts["supported"]
    if supported == 0:
        verification = "none"
    elif supported == len(claims) and unlocated_total == 0:
        verification = "full"
    else:
        verification = "partial"
    report: JSONObject = {
        "mechanism": "annotate-v2",
        "judge_status": judge_status,
        "framing_check": framing_check,
        "claims_total": total,
        **{
            v: verdicts[v]
            for v in (
                "supported",
                "unsupported",
                "unverified",
                "uncited",
                "invalid_citation",
                "from_conversation",
            )
        },
        "unverified_reasons": {reason: reasons[reason] for reason in UNVERIFIED_REASONS},
        "framing_total": framing_total,
        "unlocated_total": unlocated_total,
        "verification": verification,
        "grounding": _grounding(supported, total),
    }
    if not checked:
        report["checked"] = False
    return report


def refusal_annotation(answer: str, *, checked: bool = True) -> Annotation:
    """A refusal or notice: no claims or framing, the text is one uncovered piece, nothing verified.
    ``checked=False`` only for ``context_budget_exhausted`` (nothing was checked at all)."""
    report = faithfulness_report(
        [],
        framing_total=0,
        unlocated_total=unlocated_pieces(answer, []),
        judge_status="skipped",
        framing_check="skipped",
        checked=checked,
    )
    return Annotation(claims=[], framing=[], faithfulness=report)


def _copy(value: JSONValue) -> JSONObject:
    """A copy of one of the report's objects (``dict()`` of anything else fails, as before)."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{value!r} is not an object")
    return dict(value)


def blocked_annotation(before: Annotation) -> Annotation:
    """A Policy Guard block: nothing of the answer is published (no claims, framing, details or memory),
    but the counts of the claims checked before the block stay, as on v1. The refusal text is one
    uncovered piece."""
    report = dict(before.faithfulness)
    report.update(
        framing_total=0,
        unlocated_total=1,
        verification="none",
        unverified_reasons=_copy(before.faithfulness["unverified_reasons"]),
        grounding=_copy(before.faithfulness["grounding"]),
    )
    report.pop("checked", None)
    return Annotation(claims=[], framing=[], faithfulness=report, budget=before.budget)


@dataclass
class V1Gate:
    """The v1 answer: only supported claims (and framing) kept, recomposed so offsets stay exact."""

    answer: str
    claim_map: list[JSONObject]
    dropped_count: int
    dropped_reasons: dict[str, int]
    provenance_complete: bool
    claims_supported: int
    claims_total: int
    grounding_rate: float | None
    refused: bool
    reason: V1RefusalReason | None = None  # V1_REFUSAL_REASON when refused
