"""The agent: plan tools from the question, run them under the request budget, show the readable results
to the writer as keyed passages (P1, P2, … in the order shown), and return validated segments or one
loop-level refusal. It never composes, judges or publishes: the pipeline does that with the outcome.

Outcome rules, in the order they are checked:

* ``scope_empty`` → refusal ``source_scope_empty`` before any tool or model call.
* Tools ran and nothing readable came back (a failed or deadline-stopped search included) → ``error
  "not_found"`` (404), unless the cause is known: only documents outside the scope (``source_out_of_scope``),
  the scope's documents no longer indexed (``source_scope_unavailable``), or an off/unreachable live source
  with nothing else found (``mcp_source_unavailable``).
* A role the agent calls is gone (its replica died: the retriever under a tool, the guard's passage screen;
  :class:`~serve_app.errors.NotReady` from the port), or a tool ran out of time while the retriever does not
  answer its reachability probe (no replica up) → ``error "not_ready"`` (503): the service failed, not the
  corpus, so it is never answered as "nothing readable".
* Past the agent deadline before the first tool call (the request waited that long, e.g. in the queue of an
  Agent replica being replaced) → the budget refusal below, never "nothing readable": no tool ran.
* Nothing readable fits the context budget (with the prompt, history and output reserve) →
  ``context_budget_exhausted``: nothing written, nothing checked.
* Past the agent deadline, or no model call left for the agent → ``model_timeout`` when a model call timed
  out, else ``query_budget_exhausted``. A writer call that times out → ``model_timeout``; an unavailable model
  server with nothing else → ``error "model_failure"`` (502).
* Output cut at the token limit → ``agent_output_limit`` on v1 and on the forced tool round of a re-asked
  follow-up; elsewhere it is an invalid output. Invalid segments get ONE regeneration with the problems
  listed; still invalid → ``unparseable_completion``. Invalid output is never returned.
* A live source (SQL, a portal, BPS, an MCP server) was off, refused, failed or timed out, and the written
  answer states no fact (the other passages do not answer the question) → ``mcp_source_unavailable``: the
  answer depended on that source. When the documents answer instead, its honest note leads the answer.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from models.base import CallRecord, ModelError, ModelTimeout, ModelUnavailable
from models.json_types import JSONObject
from models.tokens import estimate_message_tokens, estimate_tokens
from retrieval.port import RetrieverPort
from serve_app import errors
from serve_app.agent.planner import FindReferences, Plan, Planner
from serve_app.agent.prompts import build_messages, render_passage
from serve_app.agent.tools.base import EventSink, Evidence, Tool, ToolContext, ToolResult, ToolRunner
from serve_app.agent.tools.search import CrossReferenceTool, LegalCheckTool, SearchTool, SummarizeTool
from serve_app.agent.tools.table import TableQueryTool
from serve_app.agent.writers.base import Writer, WriteRequest, WriterOutput
from serve_app.answer.compose import validate_segments
from serve_app.answer.refusals import TOOL_NOTICES, refusal_text
from serve_app.answer.segments import Passage, Segment
from serve_app.budget import RequestBudget
from serve_app.vocabulary import FallbackReason

PassageScreen = Callable[[str], bool] | Callable[[str], Awaitable[bool]]
_LIVE_SOURCES = ("open_data", "bps", "sql_query")
# What a live source that did not answer returns (the runner's own timeout and caught failure included).
_SOURCE_DOWN = ("unavailable", "disabled", "not_allowed", "timeout", "error")


@dataclass(frozen=True, slots=True)
class AgentRequest:
    query: str
    mode: Literal["v1", "v2"] = "v2"
    document_ids: frozenset[str] | None = None  # None: the whole corpus
    scope_empty: bool = False
    history: list[dict[str, str]] = field(default_factory=list)  # verified-only turns
    preferred_document_ids: list[str] = field(default_factory=list)
    single_document_id: str | None = None
    follow_up_reasked: bool = False
    editorial_prompt: str | None = None


@dataclass(slots=True)
class AgentOutcome:
    segments: list[Segment] = field(default_factory=list)
    passages: dict[str, Passage] = field(default_factory=dict)
    tool: str | None = None
    tool_executed: bool = False
    tool_call_audit: list[JSONObject] = field(default_factory=list)
    model_records: list[CallRecord] = field(default_factory=list)
    refusal: FallbackReason | None = None
    refusal_text: str | None = None
    error: Literal["not_found", "model_failure", "not_ready"] | None = None
    regenerated: bool = False
    budget: RequestBudget | None = None
    notices: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ToolsConfig:
    """Which tools the agent has and their limits. ``extra`` adds optional tools (sql_query, open_data,
    bps) that are registered only when configured; the planner only picks registered tools."""

    top_k: int = 8
    tool_timeout_s: float = 8.0
    table_query: bool = True
    extra: Sequence[Tool] = ()
    find_references: FindReferences | None = None


class Agent:
    def __init__(
        self,
        retriever_port: RetrieverPort,
        writer: Writer,
        *,
        tools: ToolsConfig | None = None,
        guard_passage_screen: PassageScreen | None = None,
    ) -> None:
        self.retriever = retriever_port
        self.writer = writer
        self.config = tools or ToolsConfig()
        self.screen = guard_passage_screen
        registry: list[Tool] = [SearchTool(), LegalCheckTool(), CrossReferenceTool(), SummarizeTool()]
        if self.config.table_query:
            registry.append(TableQueryTool())
        registry.extend(self.config.extra)
        self.tools: dict[str, Tool] = {t.name: t for t in registry}
        self.planner = Planner(
            available=self.tools, find_references=self.config.find_references, top_k=self.config.top_k
        )

    # ------------------------------------------------------------------ the loop

    async def run(
        self, req: AgentRequest, *, budget: RequestBudget, on_event: EventSink | None = None
    ) -> AgentOutcome:
        """One answer's agent work; see the module docstring for every outcome."""
        out = AgentOutcome(budget=budget)
        try:
            return await self._run(req, budget, on_event, out)
        except errors.NotReady:
            out.error = "not_ready"
            return out

    async def _run(
        self, req: AgentRequest, budget: RequestBudget, on_event: EventSink | None, out: AgentOutcome
    ) -> AgentOutcome:
        if req.scope_empty:
            return self._refuse(out, "source_scope_empty")
        plan = self.planner.plan(
            req.query,
            document_ids=req.document_ids,
            single_document_id=req.single_document_id,
            follow_up_reasked=req.follow_up_reasked,
        )
        room = self._passage_room(req, budget)
        if room < 0 or (plan.calls and room == 0):  # the prompt and history alone fill the context
            return self._refuse(out, "context_budget_exhausted")
        if plan.calls and budget.agent_expired():  # it waited its whole time before a tool could start
            return self._refuse(out, "model_timeout" if budget.timed_out else "query_budget_exhausted")

        results = await self._run_tools(req, plan, budget, room, on_event, out)
        passages: list[Passage] = []
        if plan.calls:
            evidence = await self._readable(results)
            if not evidence:
                return await self._nothing_readable(req, results, out)
            passages = self._fit(evidence, room)
            if not passages:
                return self._refuse(out, "context_budget_exhausted")
            out.passages = {p.key: p for p in passages}
            out.tool = _main_tool(results, evidence, passages) or out.tool
        out.notices = list(dict.fromkeys(TOOL_NOTICES[r.note] for _, r in results if r.note in TOOL_NOTICES))
        out = await self._write(req, plan, passages, budget, out)
        if (
            out.refusal is None
            and out.error is None
            and self._live_source_down(results)
            and not any(s.kind == "fact" for s in out.segments)
        ):
            # The answer depended on the live source: what else was read states nothing that answers the
            # question, so the source's absence is the answer, not "not found in the documents".
            return self._refuse(out, "mcp_source_unavailable")
        return out

    async def _run_tools(
        self,
        req: AgentRequest,
        plan: Plan,
        budget: RequestBudget,
        room: int,
        on_event: EventSink | None,
        out: AgentOutcome,
    ) -> list[tuple[str, ToolResult]]:
        runner = ToolRunner(on_event=on_event, timeout_s=self.config.tool_timeout_s)
        ctx = ToolContext(
            retriever=self.retriever,
            query=req.query,
            document_ids=req.document_ids,
            preferred_document_ids=tuple(req.preferred_document_ids),
            top_k=self.config.top_k,
            token_room=room,
        )
        results: list[tuple[str, ToolResult]] = []
        out.tool = plan.calls[0].tool if plan.calls else None
        try:
            for call in plan.calls:
                result = await runner.call(
                    self.tools[call.tool], call.args, ctx, deadline=budget.agent_deadline()
                )
                results.append((call.tool, result))
            # Search is the fallback when the planned tools found nothing readable, except when they
            # found the named document outside the scope: searching the scope then would answer a
            # different question.
            fallback = not any(r.readable or r.status == "out_of_scope" for _, r in results)
            if plan.calls and plan.fallback_search and fallback:
                search = self.tools["search"]
                args = {"query": req.query, "top_k": self.config.top_k}
                deadline = budget.agent_deadline()
                results.append(("search", await runner.call(search, args, ctx, deadline=deadline)))
        finally:  # also when a role behind a tool is gone: the audit says what ran
            out.tool_executed = bool(runner.audit)
            out.tool_call_audit = list(runner.audit)
        return results

    async def _readable(self, results: list[tuple[str, ToolResult]]) -> list[tuple[str, Evidence]]:
        seen: set[str] = set()
        out: list[tuple[str, Evidence]] = []
        for name, result in results:
            for ev in result.evidence:
                if ev.dedupe_key in seen or not ev.text.strip():
                    continue
                seen.add(ev.dedupe_key)
                if self.screen is not None and await _flagged(self.screen, ev.text):
                    continue  # injected instructions: never shown to the writer
                out.append((name, ev))
        return out

    def _fit(self, evidence: list[tuple[str, Evidence]], room: int) -> list[Passage]:
        passages: list[Passage] = []
        for _name, ev in evidence:
            passage = Passage(
                key=f"P{len(passages) + 1}",
                text=ev.text,
                kind=ev.kind,
                chunk=ev.chunk,
                identity=dict(ev.identity),
                aggregate=ev.aggregate,
            )
            cost = estimate_tokens(render_passage(passage))
            if cost <= room:
                passages.append(passage)
                room -= cost
        return passages

    async def _nothing_readable(
        self, req: AgentRequest, results: list[tuple[str, ToolResult]], out: AgentOutcome
    ) -> AgentOutcome:
        statuses = {r.status for _, r in results}
        if "out_of_scope" in statuses:
            return self._refuse(out, "source_out_of_scope")
        if self._live_source_down(results):
            return self._refuse(out, "mcp_source_unavailable")
        if req.document_ids and "empty" in statuses:
            try:
                indexed = {d.document_id for d in await self.retriever.documents()}
            except errors.NotReady:
                raise  # the retriever is gone: that is no answer about the scope
            except Exception:
                indexed = set()
            if not indexed & req.document_ids:
                return self._refuse(out, "source_scope_unavailable")
        out.error = "not_found"
        return out

    async def _write(
        self, req: AgentRequest, plan: Plan, passages: list[Passage], budget: RequestBudget, out: AgentOutcome
    ) -> AgentOutcome:
        forced = req.follow_up_reasked and bool(plan.calls)
        feedback: list[str] | None = None
        previous = ""
        for attempt in range(2):
            if budget.agent_expired() or budget.calls_left_for_agent() < 1:
                reason: FallbackReason = "model_timeout" if budget.timed_out else "query_budget_exhausted"
                return self._refuse(out, reason)
            try:
                request = WriteRequest(
                    query=req.query,
                    passages=passages,
                    history=req.history,
                    mode=req.mode,
                    editorial_prompt=req.editorial_prompt,
                    regenerate_feedback=feedback,
                    task=plan.task,
                    notices=out.notices,
                    previous_output=previous,
                )
                written: WriterOutput = await self.writer.write(request, budget=budget)
            except ModelTimeout as exc:
                self._charge(out, budget, exc.record)
                return self._refuse(out, "model_timeout")
            except ModelError as exc:
                self._charge(out, budget, exc.record)
                if attempt == 0 or not isinstance(exc, ModelUnavailable):
                    out.error = "model_failure"
                    return out
                return self._refuse(out, "unparseable_completion")
            self._charge(out, budget, written.record)
            if written.finish_reason == "length" and (forced or req.mode == "v1"):
                return self._refuse(out, "agent_output_limit")
            problems = list(written.problems)
            if written.segments is not None and not problems:
                problems = validate_segments(written.segments)
            if written.segments is not None and not problems:
                out.segments = list(written.segments)
                return out
            feedback, previous = problems or ["the output had no segments"], written.raw
            out.regenerated = attempt == 0
        return self._refuse(out, "unparseable_completion")

    # ------------------------------------------------------------------ helpers

    def _live_source_down(self, results: list[tuple[str, ToolResult]]) -> bool:
        """A live source the plan read did not answer (off, refused, unreachable, failed or timed out)."""
        return any(
            (name in _LIVE_SOURCES or (name in self.tools and self.tools[name].live_source))
            and r.status in _SOURCE_DOWN
            for name, r in results
        )

    def _passage_room(self, req: AgentRequest, budget: RequestBudget) -> int:
        """Context tokens left for passages after the prompt, the history and the output reserve."""
        shown = WriteRequest(req.query, history=req.history, editorial_prompt=req.editorial_prompt)
        messages = build_messages(shown)
        return budget.context_tokens - estimate_message_tokens(messages) - self.writer.max_output_tokens

    @staticmethod
    def _charge(out: AgentOutcome, budget: RequestBudget, record: CallRecord | None) -> None:
        if record is not None:
            budget.charge(record)
            out.model_records.append(record)

    @staticmethod
    def _refuse(out: AgentOutcome, reason: FallbackReason) -> AgentOutcome:
        out.refusal = reason
        out.refusal_text = refusal_text(reason)
        out.segments = []
        return out


async def _flagged(screen: PassageScreen, text: str) -> bool:
    verdict = screen(text)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return bool(verdict)


def _main_tool(
    results: list[tuple[str, ToolResult]], evidence: list[tuple[str, Evidence]], passages: list[Passage]
) -> str | None:
    """The tool whose result the first shown passage came from (a fallback search, when it supplied them)."""
    if not passages:
        return results[0][0] if results else None
    first = passages[0]
    for name, ev in evidence:
        if ev.text == first.text and ev.chunk is first.chunk:
            return name
    return results[0][0] if results else None
