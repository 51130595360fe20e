"""The answer's vocabulary, defined once: claim verdicts, why a claim is unverified, the answer-level
verification status and every refusal reason. ``wire/`` publishes these ``Literal``s in the schemas,
``answer/`` and ``agent/`` check values against the tuples derived from them (``get_args``), so a new
value is added here and nowhere else. The judge's own verdicts come from the judge library."""

from __future__ import annotations

from typing import Literal, get_args

from judge.types import JudgeVerdict, UnverifiedReason

__all__ = [
    "FALLBACK_REASONS", "JUDGE_VERDICTS", "UNVERIFIED_REASONS", "V1_REFUSAL_REASON", "VERDICTS",
    "ClaimOnlyVerdict", "FallbackReason", "JudgeVerdict", "UnverifiedReason", "V1FallbackReason",
    "V1RefusalReason", "Verdict", "Verification",
]

# A claim's verdict: the judge's three, and the three the annotator sets without asking the judge.
ClaimOnlyVerdict = Literal["uncited", "invalid_citation", "from_conversation"]
Verdict = Literal[JudgeVerdict, ClaimOnlyVerdict]
Verification = Literal["full", "partial", "none"]
# Why an answer was replaced by a refusal (``fallback_reason``), on every route.
FallbackReason = Literal[
    "policy_blocked",
    "query_budget_exhausted",
    "model_timeout",
    "context_budget_exhausted",
    "agent_output_limit",
    "mcp_source_unavailable",
    "source_out_of_scope",
    "source_scope_unavailable",
    "unparseable_completion",
    "source_scope_empty",
]
# /query (v1) only: too few sentences survived the faithfulness gate, so the whole answer is refused.
V1RefusalReason = Literal["insufficient_verified_claims"]
V1FallbackReason = FallbackReason | V1RefusalReason  # a union, as the published JSON Schema has it

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
JUDGE_VERDICTS: frozenset[JudgeVerdict] = frozenset(get_args(JudgeVerdict))
UNVERIFIED_REASONS: tuple[UnverifiedReason, ...] = get_args(UnverifiedReason)
FALLBACK_REASONS: tuple[FallbackReason, ...] = get_args(FallbackReason)
V1_REFUSAL_REASON: V1RefusalReason = "insufficient_verified_claims"
