from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import pytest

from judge.batching import judge_batch_outcomes
from judge.llm_judge import LLMJudge
from judge.types import JudgePassage
from models.base import Classification, ModelOutputError, ModelTimeout, ModelUnavailable
from tests.support.engines import FakeEngine, FakePairsEngine
from tests.support.judges import item, soon

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def test_labels_mode_threshold_and_records() -> None:
    engine = FakeEngine()
    judge = LLMJudge(engine)
    outcomes = run(judge.judge_outcomes([item("a", "BENAR satu"), item("b", "SALAH dua")]))
    assert [o.result.verdict for o in outcomes] == ["supported", "unsupported"]
    assert outcomes[0].result.reasons == ("p_supported=0.900",)
    assert all(len(o.records) == 1 and o.records[0].role == "judge" for o in outcomes)
    assert len(engine.classify_calls) == 1 and len(engine.classify_calls[0]) == 2  # one batched call
    strict = LLMJudge(FakeEngine(), threshold=0.95)
    assert run(strict.judge([item("a", "BENAR satu")]))[0].verdict == "unsupported"


def test_tie_is_unparseable_not_guessed() -> None:
    result = run(LLMJudge(FakeEngine()).judge([item("a", "RAGU")]))[0]
    assert (result.verdict, result.unverified_reason) == ("unverified", "unparseable")


def test_classify_pairs_used_when_engine_has_it() -> None:
    engine = FakePairsEngine()
    items = [item("a", "BENAR satu"), item("b", "SALAH dua"), item("c", "BENAR tiga", "Lain.")]
    results = run(LLMJudge(engine).judge(items))
    assert [r.verdict for r in results] == ["supported", "unsupported", "supported"]
    (pairs,) = engine.pair_calls
    assert pairs[0][0] == pairs[1][0] != pairs[2][0]  # the shared prefix is passed as such
    assert "BENAR satu" in pairs[0][1]


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ModelUnavailable(), "judge_unavailable"),
        (ModelOutputError(), "unparseable"),
        (ModelTimeout(), "judge_unavailable"),
        (RuntimeError("boom"), "judge_unavailable"),
    ],
)
def test_failing_labels_call_fails_its_batch(error: Exception, reason: str) -> None:
    engine = FakeEngine(error=error)  # type: ignore[arg-type]
    outcomes = run(LLMJudge(engine).judge_outcomes([item("a", "BENAR"), item("b", "SALAH")]))
    assert [(o.result.verdict, o.result.unverified_reason) for o in outcomes] == [("unverified", reason)] * 2
    if not isinstance(error, RuntimeError):
        assert all(o.records and not o.records[0].ok for o in outcomes)


def test_request_deadline_passing_during_call_is_deadline() -> None:
    class SlowTimeout(FakeEngine):
        async def classify(
            self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None = None
        ) -> list[Classification]:
            self.classify_calls.append(list(prompts))
            await asyncio.sleep(0.4)
            raise ModelTimeout()

    engine = SlowTimeout()
    result = run(LLMJudge(engine).judge([item("a", "BENAR", deadline=soon(0.2))]))[0]
    assert result.unverified_reason == "deadline"
    assert engine.classify_calls  # it was sent: the deadline passed in flight


def test_past_deadline_items_not_sent_by_judge_itself() -> None:
    engine = FakeEngine()
    late = item("a", "BENAR lewat", deadline=time.time() - 1)
    results = run(LLMJudge(engine).judge([late, item("b", "BENAR kini")]))
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("unverified", "deadline"),
        ("supported", None),
    ]
    (prompts,) = engine.classify_calls
    assert len(prompts) == 1 and "BENAR kini" in prompts[0] and "BENAR lewat" not in prompts[0]


def test_json_mode_one_failing_item_fails_alone() -> None:
    engine = FakeEngine(
        json_outputs={
            "DOWN": ModelUnavailable(),
            "JUNK": "I think yes",
            "OBJ": {"verdict": "unsupported", "reason": "periode berbeda"},
        }
    )
    judge = LLMJudge(engine, mode="json")
    items = [item("a", "BENAR"), item("b", "DOWN"), item("c", "JUNK"), item("d", "OBJ"), item("e", "SALAH")]
    results = run(judge.judge(items))
    assert [(r.verdict, r.unverified_reason) for r in results] == [
        ("supported", None),
        ("unverified", "judge_unavailable"),
        ("unverified", "unparseable"),
        ("unsupported", None),
        ("unsupported", None),
    ]
    assert results[3].reasons == ("periode berbeda",)
    assert results[0].reasons == ("because supported",)
    assert len(engine.generate_calls) == 5


def test_rule_veto_turns_supported_into_unsupported() -> None:
    seen: list[tuple[str, Sequence[JudgePassage], str]] = []

    def veto(claim: str, passages: Sequence[JudgePassage], *, context: str = "") -> tuple[str, ...]:
        seen.append((claim, passages, context))
        return ("scale_mismatch",) if "triliun" in claim else ()

    judge = LLMJudge(FakeEngine(), rule_veto=True, veto_fn=veto)
    items = [
        item("a", "BENAR Rp 5 triliun", context="## Pendidikan"),
        item("b", "BENAR Rp 5 miliar"),
        item("c", "SALAH Rp 5 triliun"),
    ]
    results = run(judge.judge(items))
    assert results[0].verdict == "unsupported"
    assert results[0].reasons == ("rule_veto:scale_mismatch", "p_supported=0.900")
    assert results[1].verdict == "supported"
    assert results[2].reasons == ("p_supported=0.100",)  # unsupported is never vetted
    assert seen[0][2] == "## Pendidikan" and len(seen) == 2
    off = LLMJudge(FakeEngine(), veto_fn=veto)  # rule_veto False: the function is ignored
    assert run(off.judge(items[:1]))[0].verdict == "supported"


def test_rule_veto_error_is_not_a_pass() -> None:
    def broken(claim: str, passages: object, *, context: str = "") -> tuple[str, ...]:
        raise KeyError("bug")

    result = run(LLMJudge(FakeEngine(), rule_veto=True, veto_fn=broken).judge([item("a", "BENAR")]))[0]
    assert (result.verdict, result.unverified_reason) == ("unverified", "judge_unavailable")


@pytest.mark.skipif(importlib.util.find_spec("judge.rules") is None, reason="judge.rules not built yet")
def test_rule_veto_with_the_real_rules() -> None:
    judge = LLMJudge(FakeEngine(), rule_veto=True)
    result = run(judge.judge([item("a", "BENAR: anggaran pendidikan 2023 sebesar Rp 5 triliun.")]))[0]
    assert result.verdict == "unsupported"
    assert result.reasons[0].startswith("rule_veto:")


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError):
        LLMJudge(FakeEngine(), mode="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LLMJudge(FakeEngine(), threshold=1.0)
    with pytest.raises(ValueError):
        LLMJudge(FakeEngine(), labels=("yes", "yes"))


def test_records_reach_judge_batch_outcomes() -> None:
    outcomes = run(judge_batch_outcomes(LLMJudge(FakeEngine()), [item("a", "BENAR"), item("b", "SALAH")]))
    assert [len(o.records) for o in outcomes] == [1, 1]
