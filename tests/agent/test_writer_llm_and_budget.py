from __future__ import annotations

import asyncio
import time
from typing import Any

import jsonschema
import pytest

from models.base import CallRecord, Generation
from serve_app.agent.prompts import (
    DEFAULT_EDITORIAL,
    SEGMENT_JSON_SCHEMA,
    SYSTEM_RULES,
    build_messages,
    system_prompt,
)
from serve_app.agent.writers.base import WriteRequest
from serve_app.agent.writers.llm import LLMWriter, parse_segments
from serve_app.answer.refusals import REFUSAL_REASONS, refusal_text
from serve_app.answer.segments import Passage, passage_identity
from serve_app.budget import RequestBudget
from serve_app.config import BudgetConfig
from tests.agent.conftest import corpus_chunks
from tests.contract.checks import FALLBACK_REASONS
from tests.support.agents import ScriptedEngine
from tests.support.answers import make_budget


def test_editorial_prompt_replaces_only_the_editorial_layer() -> None:
    default = system_prompt(None)
    custom = system_prompt("Jawab dengan gaya formal.")
    assert default.startswith(SYSTEM_RULES) and custom.startswith(SYSTEM_RULES)
    assert DEFAULT_EDITORIAL in default and DEFAULT_EDITORIAL not in custom
    assert custom.endswith("Jawab dengan gaya formal.")


def test_passages_are_labelled_with_the_identity_the_judge_sees() -> None:
    chunk = corpus_chunks()[2]
    passages = [
        Passage("P1", chunk.text, chunk=chunk),
        Passage("P2", "Jumlah: 5", kind="tool", identity={"dataset": "APBA", "call": "table_query(...)"}),
    ]
    history = [{"role": "user", "content": "Halo"}, {"role": "assistant", "content": "Halo juga"}]
    messages = build_messages(WriteRequest("Apa isi Pasal 7?", passages=passages, history=history))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    user = messages[-1]["content"]
    assert user.index("[P1]") < user.index("[P2]") < user.index("Pertanyaan: Apa isi Pasal 7?")
    assert "legal_reference: UU Nomor 11 Tahun 2006, Pasal 7" in user and "dataset: APBA" in user
    assert passage_identity(passages[0])["number"] == "11"


def test_schema_accepts_what_the_parser_accepts() -> None:
    good = {"segments": [{"text": "a", "kind": "fact", "cites": ["P1"], "layout": "paragraph"}]}
    jsonschema.validate(good, SEGMENT_JSON_SCHEMA)
    segments, problems = parse_segments(good)
    assert problems == [] and segments is not None and segments[0].cites == ("P1",)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"segments": [{"text": "a", "kind": "fact", "layout": "x", "cites": []}]}, SEGMENT_JSON_SCHEMA
        )
    assert parse_segments({"segments": [{"text": 3, "cites": "P1"}]})[0] is None


def test_writer_passes_the_agent_deadline_and_the_schema() -> None:
    seen: dict[str, Any] = {}

    class Spy(ScriptedEngine):
        async def generate(self, messages: list[dict[str, str]], **kwargs: Any) -> Generation:
            seen.update(kwargs)
            return await super().generate(messages, **kwargs)

    budget = make_budget()
    good = {"segments": [{"text": "Halo.", "kind": "framing", "cites": [], "layout": "paragraph"}]}
    out = asyncio.run(LLMWriter(Spy([good])).write(WriteRequest(query="Halo"), budget=budget))
    assert out.segments is not None and seen["deadline"] == budget.agent_deadline()
    assert seen["json_schema"] is SEGMENT_JSON_SCHEMA and seen["role"] == "agent"


def test_budget_keeps_the_judge_share() -> None:
    start = time.time()
    budget = RequestBudget(
        deadline=start + 10, model_calls=10, context_tokens=1000, judge_share=0.3, started_at=start
    )
    assert budget.agent_deadline() == pytest.approx(start + 7)
    assert budget.judge_deadline() == start + 10
    assert budget.calls_left_for_agent() == 7 and budget.calls_left_for_judge() == 10
    for i in range(7):
        budget.charge(CallRecord(role="agent", engine="e", model="m", prompt_tokens=10, completion_tokens=i))
    assert budget.calls_left_for_agent() == 0 and budget.calls_left_for_judge() == 3
    budget.charge(CallRecord(role="judge", engine="e", model="m", ok=False, error="timeout"))
    assert budget.timed_out and budget.calls_left_for_judge() == 2
    assert budget.usage() == {"model_calls": 8, "prompt_tokens": 70, "completion_tokens": 21}
    assert budget.records_as_dicts()[-1]["error"] == "timeout"


def test_budget_from_config_and_bad_share() -> None:
    cfg = BudgetConfig(deadline_s=20.0, model_calls=64, context_tokens=12000, judge_share=0.35)
    budget = RequestBudget.from_config(cfg, now=100.0)
    assert budget.deadline == 120.0 and budget.agent_deadline() == pytest.approx(113.0)
    with pytest.raises(ValueError):
        RequestBudget(deadline=1, model_calls=1, context_tokens=1, judge_share=1.0)


def test_every_refusal_reason_has_a_fixed_indonesian_text() -> None:
    # every fallback reason of the contract but policy_blocked (the guard's own text), and v1's own one
    v1_only = {"insufficient_verified_claims"}
    assert set(REFUSAL_REASONS) == (FALLBACK_REASONS - {"policy_blocked"}) | v1_only
    assert all(refusal_text(r).strip() for r in REFUSAL_REASONS)
    with pytest.raises(KeyError):
        refusal_text("policy_blocked")
