"""Tables of rule-judge cases: a passage, the claims written against it, and what ``check_claim`` must say of
each claim."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from judge.rules import check_claim
from judge.types import JudgePassage

VERDICTS = ("supported", "unsupported")


@dataclass(frozen=True)
class ClaimCase:
    """One row of a table: ``expect`` is a verdict ("supported", "unsupported"), or a reason code that the
    unsupported verdict must carry; ``context`` is the reader's (heading, list lead-in or table header)."""

    claim: str
    passage: JudgePassage
    expect: str
    context: str = ""

    def check(self) -> None:
        """Judge the claim and assert what the row expects (plain asserts: the RuleCheck is the message)."""
        result = check_claim(self.claim, [self.passage], context=self.context)
        verdict = "supported" if self.expect == "supported" else "unsupported"
        assert result.verdict == verdict, result
        assert self.expect in VERDICTS or self.expect in result.reasons, result


def claim_cases(
    name: str, passage: str | JudgePassage, *rows: tuple[str, str], context: str = ""
) -> list[pytest.ParameterSet]:
    """One pytest param a ``(claim, expect)`` row, with the id ``name-N`` (N from 1); a str passage is a bare
    P1 passage."""
    source = passage if isinstance(passage, JudgePassage) else JudgePassage("P1", passage)
    return [
        pytest.param(ClaimCase(claim, source, expect, context), id=f"{name}-{n}")
        for n, (claim, expect) in enumerate(rows, start=1)
    ]
