"""The ordered steps of one answer, top to bottom. The same code runs in one process (CLI, most tests)
and inside the Ray Serve ingress, where the components are handle proxies with the same async methods.

Order (CONTRACT.md): conversation (404/409) → scope (source_scope_empty) → request guard
(policy_blocked) → agent → compose → annotate (citations, framing check, judge, re-check) → v1 gate
→ answer guard (only it may replace the answer) → store (one transaction) → the typed response
(wire/responses.py), which its JSON or SSE writer reads; only the JSON writer dumps it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from typing import Any

from judge.prompt import PROMPT_TEMPLATE_VERSION as JUDGE_PROMPT_VERSION
from models.json_types import JSONObject
from serve_app import errors
from serve_app.agent.agent import AgentRequest
from serve_app.agent.prompts import AGENT_PROMPT_VERSION
from serve_app.answer.annotation import (
    Annotation,
    V1Gate,
    blocked_annotation,
    refusal_annotation,
)
from serve_app.answer.compose import compose
from serve_app.answer.refusals import refusal_text
from serve_app.answer.segments import AnnotationRequest
from serve_app.answer.v1_gate import v1_gate
from serve_app.budget import RequestBudget
from serve_app.config import AppConfig
from serve_app.conversation.exchange import Exchange
from serve_app.conversation.history import (
    from_conversation_texts,
    model_history,
    preferred_documents,
    single_referenced_document,
)
from serve_app.conversation.retention import RetentionSchedule
from serve_app.conversation.store import PlaygroundReceipt
from serve_app.guard.auth import Principal
from serve_app.guard.policy import GuardDecision
from serve_app.roles import AgentRole, AnnotatorRole, EventSink, GuardRole, RetrieverPort, StoreRole
from serve_app.scope import Scope, partner_limited, resolve_scope, selection_filter_ids
from serve_app.vocabulary import V1_REFUSAL_REASON, V1FallbackReason
from serve_app.wire.responses import (
    AnswerRecord,
    AnswerResult,
    Route,
    answer_result,
    search_result,
    stored_body,
)
from serve_app.wire.schemas import PlaygroundResponse, QueryRequest, SearchRequest

PROMPT_TEMPLATE_VERSION = f"{AGENT_PROMPT_VERSION}+{JUDGE_PROMPT_VERSION}"


@dataclass(kw_only=True, eq=False)
class Pipeline:
    """The request path over its roles (built by runtime/factory.py): a field per role, set as given."""

    config: AppConfig
    retriever: RetrieverPort
    agent: AgentRole
    annotator: AnnotatorRole
    guard: GuardRole
    store: StoreRole
    models_info: dict[str, dict[str, str]]
    # Prunes old conversations and memory after writes, when the config sets an age (None: nothing to do).
    retention: RetentionSchedule | None = None

    # ------------------------------------------------------------------ search

    async def search(self, req: SearchRequest, principal: Principal) -> JSONObject:
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
        prescreen: GuardDecision | None = None,
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
        prescreen: GuardDecision | None = None,
    ) -> AnswerResult:
        started = time.perf_counter()
        trace_id = uuid.uuid4().hex
        family = "v1" if route == "v1" else "v2"
        messages: list[dict[str, Any]] = []
        if req.conversation_id is not None:
            record = await asyncio.to_thread(self.store.get_conversation, req.conversation_id, principal.key)
            if record is None:
                raise errors.NotFound()
            owner_route = record.route
            if route != "playground" and owner_route not in (None, family):
                raise errors.Conflict()
            messages = await asyncio.to_thread(
                self.store.list_messages,
                req.conversation_id,
                last=2 * self.config.conversations.history_read_turns,  # a question and its answer each
            )

        ctx = AnswerRecord(route=route, req=req, trace_id=trace_id, started=started)
        scope = await self._scope(req.selection, req.document_ids, principal)
        if scope.empty:  # before any tool or model call, memory question or classification
            return await self._refusal(ctx, principal, "source_scope_empty")

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
            return await self._refusal(ctx, principal, "policy_blocked")

        budget = RequestBudget.from_config(self.config.budgets)
        agent_req = self._agent_request(req, route, scope, view.turns, messages)
        # Local or remote, a role hands back the budget it charged: the pipeline carries on with that one.
        outcome = await self.agent.run(agent_req, budget=budget, on_event=on_event)
        ctx.budget = budget = outcome.budget or budget
        ctx.tool = outcome.tool
        ctx.tool_executed = outcome.tool_executed
        ctx.tool_call_audit = list(outcome.tool_call_audit)
        ctx.passages = list(outcome.passages.values())
        if outcome.error == "not_found":
            raise errors.NothingReadable()
        if outcome.error == "model_failure":
            raise errors.ModelFailure()
        if outcome.error == "not_ready":
            raise errors.NotReady()
        if outcome.refusal is not None:
            if outcome.refusal == "context_budget_exhausted" and route == "v1":
                raise errors.ContextBudgetExceeded()
            return await self._refusal(ctx, principal, outcome.refusal)

        composed = compose(outcome.segments)
        asked = AnnotationRequest(
            composed=composed,
            passages=outcome.passages,
            query=req.query,
            conversation_texts=from_conversation_texts(messages, req.query),
        )
        annotation = await self.annotator.annotate(asked, budget=budget)
        ctx.budget = budget = annotation.budget or budget
        answer = composed.answer
        v1 = None
        if route == "v1":
            v1 = v1_gate(composed, annotation, min_kept_ratio=self.config.v1.min_kept_ratio)
            answer = v1.answer
        passage_texts = [p.text for p in outcome.passages.values()]
        verdict = await self.guard.check_answer(answer, passage_texts)
        if not verdict.allowed:
            ctx.blocked_category = verdict.category
            return await self._refusal(ctx, principal, "policy_blocked", before=annotation)
        if v1 is not None and v1.refused:
            reason = v1.reason or V1_REFUSAL_REASON
            return await self._refusal(ctx, principal, reason, before=annotation, gate=v1)
        return await self._publish(ctx, principal, answer, annotation, gate=v1)

    # ------------------------------------------------------------------ pieces

    async def _scope(
        self, selection: str | None, document_ids: list[str] | None, principal: Principal
    ) -> Scope:
        selections = self.config.selections
        limited = partner_limited(selections)
        if selection is None and document_ids is None and not limited:
            return Scope.everything()
        docs = await self.retriever.documents()
        # With a partner-limited selection every selection's members decide what the caller may see.
        names = list(selections) if limited else [selection] if selection else []
        filter_ids = await selection_filter_ids(self.retriever, selections, names)
        return resolve_scope(
            selection=selection,
            document_ids=document_ids,
            selections=selections,
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
    ) -> AgentRequest:
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
        ctx: AnswerRecord,
        principal: Principal,
        reason: V1FallbackReason,
        *,
        before: Annotation | None = None,
        gate: V1Gate | None = None,
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
        return await self._publish(ctx, principal, text, annotation, gate=gate, refusal=True)

    async def _publish(
        self,
        ctx: AnswerRecord,
        principal: Principal,
        answer: str,
        annotation: Annotation,
        *,
        gate: V1Gate | None = None,
        refusal: bool = False,
    ) -> AnswerResult:
        """The typed response (wire/), then the one write of this answer: a playground receipt, or the turn
        stored in its conversation (a new conversation and its first turn are one transaction), whose
        message id is then set on the response."""
        req = ctx.req
        cid = None if ctx.route == "playground" else req.conversation_id or uuid.uuid4().hex
        result = answer_result(
            ctx,
            answer,
            annotation,
            gate,
            refusal=refusal,
            models=self.models_info,
            prompt_version=PROMPT_TEMPLATE_VERSION,
            conversation_id=cid,
        )
        if isinstance(result.response, PlaygroundResponse):
            receipt = PlaygroundReceipt(
                run_id=result.response.playground_run_id,
                admin=principal.key,
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
            await asyncio.to_thread(self.store.record_playground_receipt, receipt)
            return result
        exchange = Exchange(
            conversation_id=result.response.conversation_id,
            owner=principal.key,
            route_family="v1" if ctx.route == "v1" else "v2",
            user_text=req.query,
            assistant_body=stored_body(result),
            memory_items=annotation.memory_items if not refusal else [],
            new=req.conversation_id is None,
        )
        message_id = await asyncio.to_thread(self.store.write_exchange, exchange)
        if self.retention is not None:
            self.retention.after_write()
        return result.with_message_id(message_id)
