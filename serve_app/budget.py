"""One request's budget: a wall-clock deadline, a number of model calls and a context-token limit.

The judge keeps a share of both time and calls (``judge_share``): the agent works until
:meth:`RequestBudget.agent_deadline` and while :meth:`RequestBudget.calls_left_for_agent` is positive, so
that the framing check, the judge and its re-checks still have their part when the agent stops. Every
model call, failed or not, is charged with its :class:`~models.base.CallRecord`, which also feeds
``usage`` and ``model_call_log``. Plain data (no locks, no clocks captured in closures): it pickles across
Ray handles, and a component that charged a copy returns it.
"""

from __future__ import annotations

import math
import time

from models.base import CallRecord
from models.json_types import JSONObject
from serve_app.config import BudgetConfig


class RequestBudget:
    def __init__(
        self,
        *,
        deadline: float,
        model_calls: int,
        context_tokens: int,
        judge_share: float = 0.35,
        started_at: float | None = None,
    ) -> None:
        if not 0.0 <= judge_share < 1.0:
            raise ValueError("judge_share must be in [0, 1)")
        self.started_at = time.time() if started_at is None else started_at
        self.deadline = deadline
        self.model_calls_total = max(0, int(model_calls))
        self.context_tokens = int(context_tokens)
        self.judge_share = judge_share
        self.records: list[CallRecord] = []

    @classmethod
    def from_config(cls, config: BudgetConfig, *, now: float | None = None) -> RequestBudget:
        """From ``BudgetConfig`` (``deadline_s``, ``model_calls``, ``context_tokens``, ``judge_share``)."""
        start = time.time() if now is None else now
        return cls(
            deadline=start + float(config.deadline_s),
            model_calls=int(config.model_calls),
            context_tokens=int(config.context_tokens),
            judge_share=float(config.judge_share),
            started_at=start,
        )

    # ------------------------------------------------------------------ charging

    def charge(self, record: CallRecord | None) -> None:
        """Count one model call (a failed call counts too: it used the server and the time)."""
        if record is not None:
            self.records.append(record)

    @property
    def model_calls_used(self) -> int:
        return len(self.records)

    @property
    def model_calls_left(self) -> int:
        return max(0, self.model_calls_total - self.model_calls_used)

    @property
    def timed_out(self) -> bool:
        """Whether any charged call ended in a timeout (the agent then refuses with model_timeout)."""
        return any(r.error == "timeout" for r in self.records)

    # ------------------------------------------------------------------ shares

    def judge_calls_reserved(self) -> int:
        return math.ceil(self.model_calls_total * self.judge_share)

    def calls_left_for_agent(self) -> int:
        allowance = self.model_calls_total - self.judge_calls_reserved()
        return max(0, allowance - self.model_calls_used)

    def calls_left_for_judge(self) -> int:
        return self.model_calls_left

    def agent_deadline(self) -> float:
        return self.started_at + (self.deadline - self.started_at) * (1.0 - self.judge_share)

    def judge_deadline(self) -> float:
        return self.deadline

    def agent_time_left(self, now: float | None = None) -> float:
        return self.agent_deadline() - (time.time() if now is None else now)

    def agent_expired(self, now: float | None = None) -> bool:
        return self.agent_time_left(now) <= 0

    # ------------------------------------------------------------------ reporting

    def usage(self) -> dict[str, int]:
        return {
            "model_calls": self.model_calls_used,
            "prompt_tokens": sum(r.prompt_tokens for r in self.records),
            "completion_tokens": sum(r.completion_tokens for r in self.records),
        }

    def records_as_dicts(self) -> list[JSONObject]:
        return [r.to_dict() for r in self.records]

    def __repr__(self) -> str:
        return (
            f"RequestBudget(calls={self.model_calls_used}/{self.model_calls_total}, "
            f"agent_left_s={self.agent_time_left():.3f}, context_tokens={self.context_tokens})"
        )
