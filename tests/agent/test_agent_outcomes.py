"""Every refusal reason, the 404 and 502 paths, regeneration and the output limit, with fake engines and
tools that time out, fail, exceed the budget or return nothing."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from models.base import ModelTimeout, ModelUnavailable
from retrieval.port import LocalRetrieverPort
from retrieval.retriever import Retriever
from serve_app import errors
from serve_app.agent.agent import Agent, AgentOutcome, AgentRequest, ToolsConfig
from serve_app.agent.tools.base import ToolEvent
from serve_app.agent.tools.ckan import CkanPortal, OpenDataTool
from serve_app.agent.tools.egress import EgressPolicy
from serve_app.agent.writers.embedded import EmbeddedWriter
from serve_app.agent.writers.llm import LLMWriter
from serve_app.answer.refusals import REFUSAL_TEXTS
from tests.agent.conftest import corpus_chunks
from tests.support.agents import FakeRetriever, ScriptedEngine, fake_find_references, port_of
from tests.support.answers import make_budget
from tests.support.net import free_port

QUESTION = "Berapa anggaran pendidikan Aceh tahun 2023?"
VALID = {
    "segments": [
        {"text": "Berikut datanya.", "kind": "framing", "cites": [], "layout": "paragraph"},
        {
            "text": "Pendidikan | 2023 | Rp1.250.000.000.000",
            "kind": "fact",
            "cites": ["P1"],
            "layout": "paragraph",
        },
    ]
}
INVALID = {"segments": [{"text": "baris\nbaru", "kind": "fact", "cites": ["P1"], "layout": "paragraph"}]}


def agent_with(retriever: FakeRetriever, writer: Any, **tools: Any) -> Agent:
    return Agent(
        port_of(retriever),
        writer,
        tools=ToolsConfig(find_references=fake_find_references, **tools),
    )


def run(agent: Agent, query: str = QUESTION, budget: Any = None, **kwargs: Any) -> AgentOutcome:
    return asyncio.run(agent.run(AgentRequest(query=query, **kwargs), budget=budget or make_budget()))


def assert_refusal(outcome: AgentOutcome, reason: str) -> None:
    assert outcome.refusal == reason
    assert outcome.refusal_text == REFUSAL_TEXTS[reason]
    assert outcome.segments == [] and outcome.error is None


def test_scope_empty_refuses_before_any_tool_or_model_call(retriever: FakeRetriever) -> None:
    engine = ScriptedEngine([VALID])
    outcome = run(agent_with(retriever, LLMWriter(engine)), scope_empty=True, document_ids=frozenset())
    assert_refusal(outcome, "source_scope_empty")
    assert retriever.calls == [] and engine.calls == []
    assert not outcome.tool_executed and outcome.tool_call_audit == [] and outcome.model_records == []


def test_valid_llm_segments_pass_through(retriever: FakeRetriever) -> None:
    engine = ScriptedEngine([VALID])
    outcome = run(agent_with(retriever, LLMWriter(engine)))
    assert outcome.refusal is None and not outcome.regenerated
    assert [s.text for s in outcome.segments] == [s["text"] for s in VALID["segments"]]
    prompt = engine.calls[0][-1]["content"]
    assert "[P1]" in prompt and "Pertanyaan: " + QUESTION in prompt


def test_invalid_segments_get_one_regeneration(retriever: FakeRetriever) -> None:
    engine = ScriptedEngine([INVALID, VALID])
    outcome = run(agent_with(retriever, LLMWriter(engine)))
    assert outcome.refusal is None and outcome.regenerated
    assert len(engine.calls) == 2 and "line break" in engine.calls[1][-1]["content"]
    assert len(outcome.model_records) == 2


@pytest.mark.parametrize("second", [INVALID, "not json at all", {"answer": "x"}])
def test_still_invalid_after_regeneration_is_unparseable(retriever: FakeRetriever, second: Any) -> None:
    engine = ScriptedEngine(["{broken", second])
    outcome = run(agent_with(retriever, LLMWriter(engine)))
    assert_refusal(outcome, "unparseable_completion")
    assert len(engine.calls) == 2


def test_model_timeout(retriever: FakeRetriever) -> None:
    outcome = run(agent_with(retriever, LLMWriter(ScriptedEngine([ModelTimeout()]))))
    assert_refusal(outcome, "model_timeout")
    assert outcome.model_records[0].error == "timeout"


def test_slow_model_past_the_agent_deadline_times_out(retriever: FakeRetriever) -> None:
    budget = make_budget(deadline_s=0.6, judge_share=0.5)  # the agent has 0.3 s
    outcome = run(agent_with(retriever, LLMWriter(ScriptedEngine([VALID], delay_s=2.0))), budget=budget)
    assert_refusal(outcome, "model_timeout")


def test_model_server_failure_is_a_502(retriever: FakeRetriever) -> None:
    outcome = run(agent_with(retriever, LLMWriter(ScriptedEngine([ModelUnavailable()]))))
    assert outcome.error == "model_failure" and outcome.refusal is None and outcome.segments == []


def test_calls_budget_used_up(retriever: FakeRetriever) -> None:
    budget = make_budget(calls=2, judge_share=0.5)  # one call for the agent, one kept for the judge
    outcome = run(agent_with(retriever, LLMWriter(ScriptedEngine([INVALID, VALID]))), budget=budget)
    assert_refusal(outcome, "query_budget_exhausted")
    assert budget.model_calls_used == 1 and budget.calls_left_for_judge() == 1


def test_agent_deadline_passed_after_tools_is_budget_exhausted(retriever: FakeRetriever) -> None:
    async def slow_screen(text: str) -> bool:
        await asyncio.sleep(0.15)  # the screening outlives the agent's share of the deadline
        return False

    agent = Agent(
        port_of(retriever),
        EmbeddedWriter(),
        tools=ToolsConfig(find_references=fake_find_references),
        guard_passage_screen=slow_screen,
    )
    budget = make_budget(deadline_s=0.4, judge_share=0.5)  # the agent stops at 0.2 s
    outcome = run(agent, budget=budget)
    assert outcome.tool_executed and outcome.tool_call_audit[0]["status"] == "ok"
    assert_refusal(outcome, "query_budget_exhausted")
    assert outcome.model_records == []


def test_search_stopped_at_the_agent_deadline_is_a_404() -> None:
    slow = FakeRetriever(corpus_chunks(), delay_s=0.4)
    budget = make_budget(deadline_s=0.4, judge_share=0.5)
    outcome = run(agent_with(slow, EmbeddedWriter(), tool_timeout_s=5.0), budget=budget)
    assert outcome.error == "not_found"
    assert outcome.tool_call_audit[0]["status"] == "timeout"


def test_agent_deadline_passed_before_any_tool_is_budget_exhausted_not_404(retriever: FakeRetriever) -> None:
    """A request that waited its whole time before the agent could start (queued for an Agent replica being
    replaced): no tool runs, so "nothing readable" would be untrue."""
    budget = make_budget(deadline_s=10.0, judge_share=0.5)
    budget.started_at -= 6.0  # 6 s of the agent's 5 went by before it was reached
    budget.deadline -= 6.0
    events: list[str] = []

    async def sink(event: ToolEvent) -> None:
        events.append(event["event"])

    agent = agent_with(retriever, EmbeddedWriter())
    outcome = asyncio.run(agent.run(AgentRequest(query=QUESTION), budget=budget, on_event=sink))
    assert_refusal(outcome, "query_budget_exhausted")
    assert not outcome.tool_executed and outcome.tool_call_audit == [] and events == []


def test_output_limit_on_the_forced_round_of_a_reasked_follow_up(retriever: FakeRetriever) -> None:
    engine = ScriptedEngine([("length", None)])
    outcome = run(agent_with(retriever, LLMWriter(engine)), follow_up_reasked=True)
    assert_refusal(outcome, "agent_output_limit")
    assert outcome.tool_executed and len(engine.calls) == 1


def test_output_limit_elsewhere_on_v2_is_regenerated(retriever: FakeRetriever) -> None:
    engine = ScriptedEngine([("length", None), VALID])
    outcome = run(agent_with(retriever, LLMWriter(engine)))
    assert outcome.refusal is None and outcome.regenerated


def test_output_limit_on_v1_is_the_notice(retriever: FakeRetriever) -> None:
    outcome = run(agent_with(retriever, LLMWriter(ScriptedEngine([("length", None)]))), mode="v1")
    assert_refusal(outcome, "agent_output_limit")


def test_context_budget_exhausted_when_no_passage_fits(retriever: FakeRetriever) -> None:
    engine = ScriptedEngine([VALID])
    writer = LLMWriter(engine, max_output_tokens=100)
    agent = agent_with(retriever, writer)
    room_probe = agent._passage_room(AgentRequest(query=QUESTION), make_budget(context=0))
    budget = make_budget(context=-room_probe + 10)  # 10 tokens of room: no passage fits
    outcome = run(agent, budget=budget)
    assert_refusal(outcome, "context_budget_exhausted")
    assert outcome.tool_executed and engine.calls == []


def test_context_budget_exhausted_before_tools_when_history_fills_it(retriever: FakeRetriever) -> None:
    engine = ScriptedEngine([VALID])
    history = [{"role": "user", "content": "kata " * 13000}]
    outcome = run(agent_with(retriever, LLMWriter(engine)), history=history)
    assert_refusal(outcome, "context_budget_exhausted")
    assert engine.calls == [] and not outcome.tool_executed


def test_nothing_found_is_a_404(retriever: FakeRetriever) -> None:
    engine = ScriptedEngine([VALID])
    outcome = run(agent_with(retriever, LLMWriter(engine)), query="zzzqx wvvut")
    assert outcome.error == "not_found" and outcome.refusal is None and outcome.tool_executed
    assert engine.calls == []


def test_failing_search_is_a_404() -> None:
    broken = FakeRetriever(corpus_chunks(), fail=True)
    outcome = run(agent_with(broken, EmbeddedWriter()))
    assert outcome.error == "not_found"
    assert [a["status"] for a in outcome.tool_call_audit] == ["error"]


class _GoneAfterSearch(LocalRetrieverPort):
    """A retriever replica that died: every call raises what the port of a dead replica raises. With
    ``empty_search`` the search still answers (nothing found) and only the later scope check meets it."""

    def __init__(self, retriever: FakeRetriever, *, empty_search: bool) -> None:
        super().__init__(cast(Retriever, retriever))
        self.empty_search = empty_search

    async def search(self, query: str, **kwargs: Any) -> list[Any]:
        if self.empty_search:
            return []
        raise errors.NotReady()

    async def documents(self) -> list[Any]:
        raise errors.NotReady()


@pytest.mark.parametrize("empty_search", [False, True], ids=["search", "scope-check"])
def test_a_retriever_gone_is_not_ready_never_nothing_readable(empty_search: bool) -> None:
    port = _GoneAfterSearch(FakeRetriever(corpus_chunks()), empty_search=empty_search)
    events: list[str] = []

    async def sink(event: ToolEvent) -> None:
        events.append(event["event"])

    request = AgentRequest(query=QUESTION, document_ids=frozenset({"qanun-apba-2023"}))
    outcome = asyncio.run(Agent(port, EmbeddedWriter()).run(request, budget=make_budget(), on_event=sink))
    assert outcome.error == "not_ready" and outcome.refusal is None and outcome.segments == []
    assert [a["status"] for a in outcome.tool_call_audit][:1] == ["empty" if empty_search else "error"]
    assert events[:2] == ["tool.started", "tool.finished"]


class _Hangs(LocalRetrieverPort):
    """Every search waits past the tool deadline; ``up`` is what the reachability probe says."""

    def __init__(self, retriever: FakeRetriever, *, up: bool) -> None:
        super().__init__(cast(Retriever, retriever))
        self.up = up

    async def search(self, query: str, **kwargs: Any) -> list[Any]:
        await asyncio.sleep(5.0)
        return []

    async def reachable(self) -> bool:
        return self.up


@pytest.mark.parametrize("up", [True, False], ids=["slow-search", "retriever-not-answering"])
def test_a_search_timeout_is_404_only_while_the_retriever_answers(up: bool) -> None:
    agent = Agent(
        _Hangs(FakeRetriever(corpus_chunks()), up=up),
        EmbeddedWriter(),
        tools=ToolsConfig(tool_timeout_s=0.05),
    )
    outcome = run(agent)
    assert outcome.error == ("not_found" if up else "not_ready")
    assert outcome.tool_call_audit[0]["status"] == "timeout"


def test_search_stopped_at_the_tool_deadline_is_a_404() -> None:
    slow = FakeRetriever(corpus_chunks(), delay_s=0.5)
    outcome = run(agent_with(slow, EmbeddedWriter(), tool_timeout_s=0.05))
    assert outcome.error == "not_found"
    assert outcome.tool_call_audit[0]["status"] == "timeout"


def test_article_outside_the_scope(retriever: FakeRetriever) -> None:
    outcome = run(
        agent_with(retriever, EmbeddedWriter()), query="Pasal 3 UU 31/2004", document_ids=frozenset({"apba"})
    )
    assert_refusal(outcome, "source_out_of_scope")
    assert [a["tool"] for a in outcome.tool_call_audit] == ["legal_check"]


def test_scope_no_longer_indexed(retriever: FakeRetriever) -> None:
    outcome = run(agent_with(retriever, EmbeddedWriter()), document_ids=frozenset({"removed-doc"}))
    assert_refusal(outcome, "source_scope_unavailable")


def _unreachable_portal() -> OpenDataTool:
    """A CKAN portal on the allowlist where nothing listens."""
    port = free_port()
    return OpenDataTool(
        [CkanPortal("Open Data", f"http://127.0.0.1:{port}", timeout_s=1.0)],
        egress=EgressPolicy([f"127.0.0.1:{port}"]),
    )


def test_unreachable_live_source_with_nothing_else(retriever: FakeRetriever) -> None:
    portal = _unreachable_portal()
    outcome = run(
        agent_with(retriever, EmbeddedWriter(), extra=[portal]), query="Berapa jumlah penduduk miskin zzqx?"
    )
    assert_refusal(outcome, "mcp_source_unavailable")
    assert [a["status"] for a in outcome.tool_call_audit] == ["unavailable", "empty"]


def test_unreachable_live_source_says_so_when_documents_answer(retriever: FakeRetriever) -> None:
    portal = _unreachable_portal()
    outcome = run(
        agent_with(retriever, EmbeddedWriter(), extra=[portal]), query="Statistik anggaran pendidikan 2023"
    )
    assert outcome.refusal is None
    texts = [s.text for s in outcome.segments]
    assert any("Portal Open Data sedang tidak dapat dihubungi" in t for t in texts)
    assert outcome.tool == "search"


def test_events_and_audit_match(retriever: FakeRetriever) -> None:
    events: list[ToolEvent] = []

    async def sink(event: ToolEvent) -> None:
        events.append(event)

    agent = agent_with(retriever, EmbeddedWriter())
    outcome = asyncio.run(
        agent.run(AgentRequest(query="Pasal 3 UU 31/2004"), budget=make_budget(), on_event=sink)
    )
    started = [e["data"] for e in events if e["event"] == "tool.started"]
    finished = [e["data"] for e in events if e["event"] == "tool.finished"]
    assert [s["call_id"] for s in started] == [f["call_id"] for f in finished]
    audit = outcome.tool_call_audit
    assert [a["call_id"] for a in audit] == [s["call_id"] for s in started]
    assert {"tool", "arguments", "started_at", "duration_ms", "status", "result_count"} <= set(audit[0])
    assert audit[0]["tool"] == "legal_check" and audit[0]["result_count"] == 1
