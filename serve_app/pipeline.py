"""The ordered steps of one answer, top to bottom. The same code runs in one process (CLI, most tests)
and inside the Ray Serve ingress, where the components are handle proxies with the same async methods.

Order (CONTRACT.md): conversation (404/409) → scope (source_scope_empty) → request guard
(policy_blocked) → agent → compose → annotate (citations, framing check, judge, re-check) → v1 gate
→ answer guard (only it may replace the answer) → store (one transaction) → body.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from judge.prompt import PROMPT_TEMPLATE_VERSION as JUDGE_PROMPT_VERSION
from serve_app import errors
from serve_app.agent.prompts import AGENT_PROMPT_VERSION
from serve_app.answer.annotation import Annotation, blocked_annotation, refusal_annotation
from serve_app.answer.compose import compose
from serve_app.answer.refusals import refusal_text
from serve_app.answer.segments import Passage
from serve_app.answer.v1_gate import V1_REFUSAL_REASON, v1_gate
from serve_app.budget import RequestBudget
from serve_app.config import AppConfig
from serve_app.conversation.history import (
    from_conversation_texts,
    model_history,
    preferred_documents,
    single_referenced_document,
)
from serve_app.guard.auth import Principal
from serve_app.scope import Scope, resolve_scope
from serve_app.wire.responses import AnswerResult, Route, search_result
from serve_app.wire.schemas import (
    PlaygroundRequest,
    PlaygroundResponse,
    QueryRequest,
    QueryV1Response,
    QueryV2Response,
    SearchRequest,
    dump,
)

EventSink = Callable[[dict[str, Any]], Awaitable[None]]
PROMPT_TEMPLATE_VERSION = f"{AGENT_PROMPT_VERSION}+{JUDGE_PROMPT_VERSION}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Pipeline:
    def __init__(
        self,
        *,
        config: AppConfig,
        retriever: Any,
        agent: Any,
        annotator: Any,
        guard: Any,
        store: Any,
        models_info: dict[str, dict[str, str]],
    ) -> None:
        self.config = config
        self.retriever = retriever
        self.agent = agent
        self.annotator = annotator
        self.guard = guard
        self.store = store
        self.models_info = models_info

    # ------------------------------------------------------------------ search

    async def search(self, req: SearchRequest, principal: Principal) -> dict[str, Any]:
        scope = await self._scope(req.selection, req.document_ids, principal)
        if scope.empty:
            return {"query": req.query, "results": [], "fallback_reason": "source_scope_empty"}
        hits = await self.retriever.search(
            req.query, top_k=req.top_k, document_ids=scope.document_ids, provenance=req.include_provenance
        )
        results = []
        for hit in hits:
            # A search result has no citation key (keys are given per answer): null, as the schema says.
            item = {**search_result(hit), "citation": {**hit.chunk.citation(), "citation_key": None}}
            if req.include_provenance:
                item["provenance"] = hit.stages
            results.append(item)
        return {"query": req.query, "results": results, "fallback_reason": None}

    # ------------------------------------------------------------------ answers

    async def answer(
        self,
        req: QueryRequest,
        principal: Principal,
        *,
        route: Route,
        on_event: EventSink | None = None,
        prescreen: Any = None,
    ) -> AnswerResult:
        """``prescreen``: the guard's verdict on ``req.query`` alone, made at admission (the ingress asks
        for it in the same call as auth); it stands in for the request screen only when no history comes
        with the question, and is applied here, at the screen's place in the contract's order."""
        cid = req.conversation_id
        if cid is None:
            return await self._answer(req, principal, route=route, on_event=on_event, prescreen=prescreen)
        async with self.store.conversation_lock(cid):  # turns of one conversation keep their order
            return await self._answer(req, principal, route=route, on_event=on_event, prescreen=prescreen)

    async def _answer(
        self,
        req: QueryRequest,
        principal: Principal,
        *,
        route: Route,
        on_event: EventSink | None,
        prescreen: Any = None,
    ) -> AnswerResult:
        started = time.perf_counter()
        trace_id = uuid.uuid4().hex
        family = "v1" if route == "v1" else "v2"
        messages: list[dict[str, Any]] = []
        if req.conversation_id is not None:
            record = await asyncio.to_thread(self.store.get_conversation, req.conversation_id, principal.key)
            if record is None:
                raise errors.NotFound()
            owner_route = getattr(record, "route", None)
            if route != "playground" and owner_route not in (None, family):
                raise errors.Conflict()
            messages = await asyncio.to_thread(self.store.list_messages, req.conversation_id)

        ctx = _Ctx(route=route, req=req, principal=principal, trace_id=trace_id, started=started)
        scope = await self._scope(req.selection, req.document_ids, principal)
        if scope.empty:  # before any tool or model call, memory question or classification
            return await self._refusal(ctx, "source_scope_empty", messages)

        view = model_history(messages, max_exchanges=self.config.history_exchanges)
        ctx.history_truncated = view.truncated
        ctx.exchanges_in_view = view.exchanges_in_view
        user_history = [t["content"] for t in view.turns if t.get("role") == "user"]
        if prescreen is not None and not user_history:
            decision = prescreen
        else:
            decision = await self.guard.screen_request(req.query, user_history)
        if not decision.allowed:
            ctx.blocked_category = decision.category
            return await self._refusal(ctx, "policy_blocked", messages)

        budget = RequestBudget.from_config(self.config.budgets)
        agent_req = self._agent_request(req, route, scope, view.turns, messages)
        outcome = await self.agent.run(agent_req, budget=budget, on_event=on_event)
        budget = outcome.budget if getattr(outcome, "budget", None) is not None else budget
        ctx.budget = budget
        ctx.tool = outcome.tool
        ctx.tool_executed = outcome.tool_executed
        ctx.tool_call_audit = list(outcome.tool_call_audit)
        ctx.passages = list(outcome.passages.values())
        if outcome.error == "not_found":
            raise errors.NothingReadable()
        if outcome.error == "model_failure":
            raise errors.ModelFailure()
        if outcome.refusal is not None:
            if outcome.refusal == "context_budget_exhausted" and route == "v1":
                raise errors.ContextBudgetExceeded()
            return await self._refusal(ctx, outcome.refusal, messages)

        composed = compose(outcome.segments)
        annotation: Annotation = await self.annotator.annotate(
            composed=composed,
            passages=outcome.passages,
            query=req.query,
            conversation_texts=from_conversation_texts(messages, req.query),
            budget=budget,
        )
        spent = getattr(annotation, "budget", None)
        if spent is not None:
            ctx.budget = budget = spent
        answer = composed.answer
        v1 = None
        if route == "v1":
            v1 = v1_gate(composed, annotation, min_kept_ratio=self.config.v1.min_kept_ratio)
            answer = v1.answer
        passage_texts = [p.text for p in outcome.passages.values()]
        verdict = await self.guard.check_answer(answer, passage_texts)
        if not verdict.allowed:
            ctx.blocked_category = verdict.category
            return await self._refusal(ctx, "policy_blocked", messages, before=annotation)
        if v1 is not None and v1.refused:
            reason = v1.reason or V1_REFUSAL_REASON
            return await self._refusal(ctx, reason, messages, before=annotation, v1_gate=v1)
        return await self._publish(ctx, answer, annotation, messages, v1_gate=v1)

    # ------------------------------------------------------------------ pieces

    async def _scope(
        self, selection: str | None, document_ids: list[str] | None, principal: Principal
    ) -> Scope:
        if selection is None and document_ids is None:
            return Scope.everything()
        docs = await self.retriever.documents()
        filter_ids: dict[str, list[str]] = {}
        spec = self.config.selections.get(selection) if selection else None
        if spec is not None and spec.filter is not None:
            f = spec.filter
            filter_ids[selection] = await self.retriever.resolve_filter(  # type: ignore[index]
                type=f.type, year=f.year, issuer=f.issuer
            )
        return resolve_scope(
            selection=selection,
            document_ids=document_ids,
            selections=self.config.selections,
            indexed_ids=[d.document_id for d in docs],
            filter_ids=filter_ids,
            caller_issuer=principal.issuer if principal.verified else None,
        )

    def _agent_request(
        self,
        req: QueryRequest,
        route: Route,
        scope: Scope,
        turns: list[dict[str, str]],
        messages: list[dict[str, Any]],
    ) -> Any:
        from serve_app.agent.agent import AgentRequest

        single = single_referenced_document(messages, req.query) if messages else None
        preferred = preferred_documents(messages) if messages else []
        previous_user = [m.get("content") or m.get("text") for m in messages if m.get("role") == "user"]
        reasked = any(
            isinstance(t, str) and t.strip().lower() == req.query.strip().lower() for t in previous_user
        )
        return AgentRequest(
            query=req.query,
            mode="v1" if route == "v1" else "v2",
            document_ids=scope.document_ids,
            scope_empty=scope.empty,
            history=turns,
            preferred_document_ids=preferred,
            single_document_id=single,
            follow_up_reasked=reasked,
            editorial_prompt=getattr(req, "editorial_prompt", None),
        )

    async def _refusal(
        self,
        ctx: _Ctx,
        reason: str,
        messages: list[dict[str, Any]],
        *,
        before: Annotation | None = None,
        v1_gate: Any = None,
    ) -> AnswerResult:
        if reason == "policy_blocked":  # only the guard's own texts replace an answer
            text = await self.guard.refusal_text(
                "answer_blocked" if before is not None else "request_blocked"
            )
        else:
            text = refusal_text(reason)
        if reason == "policy_blocked" and before is not None:
            annotation = blocked_annotation(before)
        else:
            annotation = refusal_annotation(text, checked=reason != "context_budget_exhausted")
        ctx.fallback_reason = reason
        ctx.finish_reason = "policy_blocked" if reason == "policy_blocked" else "refusal"
        ctx.passages_published = reason != "policy_blocked"
        return await self._publish(ctx, text, annotation, messages, v1_gate=v1_gate, refusal=True)

    async def _publish(
        self,
        ctx: _Ctx,
        answer: str,
        annotation: Annotation,
        messages: list[dict[str, Any]],
        *,
        v1_gate: Any = None,
        refusal: bool = False,
    ) -> AnswerResult:
        req, route = ctx.req, ctx.route
        cited_keys: list[str] = []
        for claim in annotation.claims:
            for key in claim["citation_keys"]:
                if key not in claim["invalid_citation_keys"] and key not in cited_keys:
                    cited_keys.append(key)
        if route == "v1" and v1_gate is not None and not refusal:
            cited_keys = [k for entry in v1_gate.claim_map for k in entry["citation_keys"]]
            cited_keys = list(dict.fromkeys(cited_keys))
        by_key = {p.key: p for p in ctx.passages}
        citations = [dict(by_key[k].citation(), citation_key=k) for k in cited_keys if k in by_key]
        usage = (
            ctx.budget.usage()
            if ctx.budget is not None
            else {"model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        )
        records = ctx.budget.records_as_dicts() if ctx.budget is not None else []
        search_calls = [
            a
            for a in ctx.tool_call_audit
            if a.get("tool") in ("search", "legal_check", "summarize", "cross_reference", "table_query")
        ]
        common: dict[str, Any] = {
            "answer": answer,
            "trace_id": ctx.trace_id,
            "history_truncated": ctx.history_truncated,
            "history_exchanges_in_view": ctx.exchanges_in_view,
            "citations": citations,
            "tool": ctx.tool,
            "tool_executed": ctx.tool_executed,
            "fallback_used": refusal,
            "fallback_reason": ctx.fallback_reason,
            "model": self.models_info,
            "prompt_template_version": PROMPT_TEMPLATE_VERSION,
            "usage": usage,
            "retrieval": {
                "queries": len(search_calls),
                "passages_shown": len(ctx.passages),
                "documents": len({p.chunk.document_id for p in ctx.passages if p.chunk is not None}),
                "latency_ms": round(sum(float(a.get("duration_ms", 0.0)) for a in search_calls), 3),
            },
            "created_at": _now(),
            "grounding": annotation.grounding_details,
            "used_docs": _used_docs(ctx.passages),
            "tool_call_audit": ctx.tool_call_audit,
            "model_call_log": records,
        }
        opt_in = set()
        if req.include_grounding:
            opt_in.add("grounding")
        if req.include_provenance:
            opt_in.update({"used_docs", "tool_call_audit", "model_call_log"})

        if route == "v1":
            gate = v1_gate
            body_model: Any = QueryV1Response(
                **common,
                conversation_id="",
                message_id="",
                claim_map=gate.claim_map if gate is not None and not refusal else [],
                dropped_claims_count=gate.dropped_count if gate is not None else 0,
                dropped_claim_reasons=gate.dropped_reasons if gate is not None else {},
                provenance_complete=gate.provenance_complete if gate is not None else True,
                claims_supported=gate.claims_supported if gate is not None else annotation.claims_supported,
                claims_total=gate.claims_total if gate is not None else annotation.claims_total,
                grounding_rate=gate.grounding_rate if gate is not None else annotation.grounding_rate,
            )
        else:
            v2_fields = {
                "claims": annotation.claims,
                "framing": annotation.framing,
                "faithfulness": annotation.faithfulness,
                "claims_supported": annotation.claims_supported,
                "claims_total": annotation.claims_total,
                "grounding_rate": annotation.grounding_rate,
            }
            if route == "playground":
                body_model = PlaygroundResponse(
                    **common,
                    **v2_fields,
                    playground_run_id=uuid.uuid4().hex,
                    latency_ms=round((time.perf_counter() - ctx.started) * 1000, 3),
                    editorial_prompt_applied=self.models_info["agent"]["engine"] != "embedded",
                )
            else:
                body_model = QueryV2Response(**common, **v2_fields, conversation_id="", message_id="")
        body = dump(body_model, opt_in=opt_in)

        if route == "playground":
            await asyncio.to_thread(
                self.store.record_playground_receipt,
                run_id=body["playground_run_id"],
                admin=ctx.principal.key,
                status=ctx.fallback_reason or "answered",
                counts={
                    "claims_total": annotation.claims_total,
                    "claims_supported": annotation.claims_supported,
                    "framing_total": len(annotation.framing),
                    "passages": len(ctx.passages),
                },
                started_at=ctx.started_wall,
                finished_at=time.time(),
            )
        else:
            stored = dict(body)
            for name in ("grounding", "used_docs", "tool_call_audit", "model_call_log"):
                stored.pop(name, None)
            stored["v2_faithfulness"] = annotation.faithfulness if route == "v2" else None
            family = "v1" if route == "v1" else "v2"
            memory = annotation.memory_items if not refusal else []
            cid = req.conversation_id or uuid.uuid4().hex
            stored["conversation_id"] = cid
            # A new conversation and its first turn are one transaction.
            write = self.store.append_exchange if req.conversation_id else self.store.start_conversation
            message_id = await asyncio.to_thread(
                write, cid, ctx.principal.key, family, req.query, stored, memory_items=memory
            )
            body["conversation_id"] = cid
            body["message_id"] = message_id
        return AnswerResult(
            route=route,
            body=body,
            passages=ctx.passages if ctx.passages_published else [],
            blocked_category=ctx.blocked_category,
            finish_reason=ctx.finish_reason,
        )


@dataclass
class _Ctx:
    route: Route
    req: QueryRequest | PlaygroundRequest
    principal: Principal
    trace_id: str
    started: float
    started_wall: float = field(default_factory=time.time)
    history_truncated: bool = False
    exchanges_in_view: int = 0
    budget: RequestBudget | None = None
    tool: str | None = None
    tool_executed: bool = False
    tool_call_audit: list[dict[str, Any]] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    passages_published: bool = True
    fallback_reason: str | None = None
    blocked_category: str | None = None
    finish_reason: str = "stop"


def _used_docs(passages: list[Passage]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for p in passages:
        if p.chunk is not None and p.chunk.document_id not in seen:
            c = p.chunk
            seen[c.document_id] = {
                "document_id": c.document_id,
                "document_title": c.document_title,
                "source": c.source,
                "document_type": c.identity.doc_type,
                "document_number": c.identity.number,
                "document_year": c.identity.year,
            }
    return list(seen.values())
