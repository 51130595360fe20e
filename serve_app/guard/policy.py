"""Government Policy Guard: screens what comes in and reads every answer before it goes out.

Ray-free: the Guard deployment wraps one :class:`PolicyGuard`. The embedded engine is deterministic
(patterns and lexicons from ``configs/policy.yaml`` over normalised text,
see :mod:`serve_app.guard.textnorm`).
An optional model check (``llm_check``) can be added; it runs only after the deterministic checks pass and
can only block more, never allow what they blocked.

There is deliberately no argument, flag or header that turns any check off: every public method screens
unconditionally, and a text asking for the guard to be disabled is itself screened as a jailbreak.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from serve_app.guard.policy_config import REFUSAL_KINDS, PolicyConfig, load_policy
from serve_app.guard.policy_engine import Finding, RuleEngine, unsourced


@dataclass(frozen=True)
class GuardDecision:
    """``allowed`` False means the text must not pass; ``category`` and ``rule`` name why (policy ids)."""

    allowed: bool
    category: str | None = None
    rule: str | None = None


ALLOWED = GuardDecision(True, None, None)

# (stage, text, context) -> decision. stage is "request" or "answer"; context is the history for a request
# and the cited passage texts for an answer.
LlmCheck = Callable[[str, str, Sequence[str]], Awaitable[GuardDecision]]


@dataclass(frozen=True)
class RequestLimits:
    """Sizes checked before anything is parsed (413) or screened. Defaults match configs/default.yaml."""

    max_body_bytes: int = 65_536
    max_history_items: int = 64


def _blocked(finding: Finding, prefix: str = "") -> GuardDecision:
    return GuardDecision(False, finding.category, prefix + finding.rule)


class PolicyGuard:
    """Deterministic policy checks over requests, retrieved passages and composed answers."""

    def __init__(
        self,
        config: PolicyConfig,
        *,
        limits: RequestLimits | None = None,
        llm_check: LlmCheck | None = None,
        llm_fail_closed: bool = False,
        history_window: int = 6,
    ) -> None:
        self.config = config
        self.limits = limits or RequestLimits()
        self._engine = RuleEngine(config)
        self._llm_check = llm_check
        self._llm_fail_closed = llm_fail_closed
        self._history_window = history_window

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        limits: RequestLimits | None = None,
        llm_check: LlmCheck | None = None,
        llm_fail_closed: bool = False,
    ) -> PolicyGuard:
        """Load ``path`` (YAML). Any problem in the file raises ``ValueError`` with one clear sentence."""
        return cls(load_policy(path), limits=limits, llm_check=llm_check, llm_fail_closed=llm_fail_closed)

    @property
    def version(self) -> str:
        """The declared policy version plus a digest of the file, so an unbumped edit still shows."""
        return f"{self.config.version}+{self.config.digest}"

    def refusal_text(self, kind: str) -> str:
        """The fixed Indonesian refusal for ``"request_blocked"`` or ``"answer_blocked"``."""
        if kind not in REFUSAL_KINDS:
            raise ValueError(f"Unknown refusal kind {kind!r}; expected one of {', '.join(REFUSAL_KINDS)}.")
        return self.config.refusals[kind]

    def check_size(self, body_bytes: int) -> GuardDecision:
        """413 check on the raw body length, before the body is read as JSON."""
        if body_bytes > self.limits.max_body_bytes:
            return GuardDecision(False, "size", "size.body")
        return ALLOWED

    def screen_request(self, query: str, history: Sequence[str] = ()) -> GuardDecision:
        """Jailbreak, injected instructions and SARA hostility in the question and in the history it brings.

        Each earlier turn is screened alone, and the last turns are screened joined with the question, so a
        jailbreak split over several messages is read whole.
        """
        if len(history) > self.limits.max_history_items:
            return GuardDecision(False, "size", "size.history")
        finding = self._engine.scan(query, "request")
        if finding is not None:
            return _blocked(finding)
        for turn in history:
            finding = self._engine.scan(turn, "history")
            if finding is not None:
                return _blocked(finding, "history:")
        if history:
            recent = [*history[-self._history_window :], query]
            finding = self._engine.scan("\n".join(recent), "history")
            if finding is not None:
                return _blocked(finding, "conversation:")
        return ALLOWED

    def screen_passage(self, text: str) -> GuardDecision:
        """Instructions planted inside a retrieved passage. The agent drops or flags a blocked passage."""
        finding = self._engine.scan(text, "passage")
        return ALLOWED if finding is None else _blocked(finding)

    def check_answer(self, answer: str, passages: Sequence[str] = ()) -> GuardDecision:
        """The whole composed answer: SARA hostility, government communication policy, and personal data or
        links that none of the cited ``passages`` contain."""
        finding = self._engine.scan(answer, "answer")
        if finding is not None:
            return _blocked(finding)
        leak = unsourced(self.config.sourced, answer, passages)
        if leak is not None:
            return GuardDecision(False, leak.category, leak.id)
        return ALLOWED

    async def ascreen_request(self, query: str, history: Sequence[str] = ()) -> GuardDecision:
        decision = self.screen_request(query, history)
        if not decision.allowed:
            return decision
        return await self._second_opinion("request", query, history)

    async def acheck_answer(self, answer: str, passages: Sequence[str] = ()) -> GuardDecision:
        decision = self.check_answer(answer, passages)
        if not decision.allowed:
            return decision
        return await self._second_opinion("answer", answer, passages)

    async def _second_opinion(self, stage: str, text: str, context: Sequence[str]) -> GuardDecision:
        if self._llm_check is None:
            return ALLOWED
        try:
            verdict = await self._llm_check(stage, text, context)
        except Exception:  # noqa: BLE001 - any model failure: the deterministic verdict stands, or fail closed
            return GuardDecision(False, "llm_unavailable", "llm.error") if self._llm_fail_closed else ALLOWED
        # The model may add a block; it can never lift one (the deterministic checks already passed here).
        return verdict if not verdict.allowed else ALLOWED
