"""The judge role's protocol: a list of items in, one result per item out, in the same order."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from judge.types import JudgeItem, JudgeResult


class Judge(ABC):
    """Checks segments against their cited passages.

    ``judge`` never raises for a single bad item: a failing item, or a failing batch, comes back as
    ``unverified`` with ``unverified_reason`` ``judge_unavailable`` or ``unparseable``; items whose
    ``deadline`` has passed come back as ``unverified``/``deadline`` without being sent to a model.
    """

    name: str = "judge"
    # A deterministic judge (the rule judge) gives the same verdict to an item judged alone as in a batch, so
    # re-checking its ``unsupported`` verdicts costs time and budget and can change nothing.
    deterministic: bool = False

    @abstractmethod
    async def judge(self, items: Sequence[JudgeItem]) -> list[JudgeResult]: ...
