"""The answer responses: what one answer's steps recorded (:class:`AnswerRecord`) turned into the typed
response of /query, /query/v2 or /playground (:class:`AnswerResult`, what the JSON and SSE writers are
handed), the copy of it a conversation stores, and the fields of one search result.

The response stays a pydantic model to the edge: the pipeline sets its ids on it (``model_copy``), the
ingress reads the annotation for its metrics and sets the v1 artifacts on it, the SSE writer reads its
attributes, and the JSON writer dumps it once (:meth:`AnswerResult.json_body`)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias

from models.json_types import JSONObject, json_list
from retrieval.types import SearchHit
from serve_app.answer.annotation import Annotation, V1Gate
from serve_app.answer.segments import Passage
from serve_app.budget import RequestBudget
from serve_app.wire.schemas import (
    OPT_IN_FIELDS,
    Artifact,
    PlaygroundRequest,
    PlaygroundResponse,
    QueryRequest,
    QueryV1Response,
    QueryV2Response,
)

Route = Literal["v1", "v2", "playground"]
FinishReason = Literal["stop", "refusal", "policy_blocked"]
AnswerResponse: TypeAlias = QueryV1Response | QueryV2Response | PlaygroundResponse
# What a dump leaves out, by field name (pydantic's ``exclude``): a field, or some fields of a nested model.
Exclusions: TypeAlias = dict[str, bool | set[str]]
_SEARCH_TOOLS = ("search", "legal_check", "summarize", "cross_reference", "table_query")
_NO_USAGE = {"model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}


@dataclass(frozen=True)
class AnswerResult:
    """Everything the JSON and SSE writers need: the typed response (with its ids), the annotation it was
    built from, and what its JSON dump leaves out (``exclude``, decided when the response is built)."""

    route: Route
    response: AnswerResponse
    annotation: Annotation
    exclude: Exclusions = field(default_factory=dict)
    passages: list[Passage] = field(default_factory=list)
    blocked_category: str | None = None
    finish_reason: FinishReason = "stop"

    def json_body(self) -> JSONObject:
        """The one dump of the answer, by alias: the JSON writer's body (opt-in fields only when asked,
        ``artifacts`` only when offered, ``faithfulness.checked`` only when false)."""
        return self.response.model_dump(mode="json", by_alias=True, exclude=self.exclude)

    def with_message_id(self, message_id: str) -> AnswerResult:
        """The answer once its turn is stored: the assistant message's id set on the response."""
        if isinstance(self.response, PlaygroundResponse):
            raise TypeError("a playground run has no message id")
        return replace(self, response=self.response.model_copy(update={"message_id": message_id}))

    def with_artifacts(self, artifacts: list[Artifact]) -> AnswerResult:
        """v1 with ``offer_artifacts``: the files set on the response, and then present in its dump."""
        if not isinstance(self.response, QueryV1Response):
            raise TypeError("only a v1 answer offers artifacts")
        exclude = {name: value for name, value in self.exclude.items() if name != "artifacts"}
        response = self.response.model_copy(update={"artifacts": artifacts})
        return replace(self, response=response, exclude=exclude)


@dataclass
class AnswerRecord:
    """What the steps of one answer recorded, as the pipeline goes; the response is built from it at the
    end."""

    route: Route
    req: QueryRequest | PlaygroundRequest
    trace_id: str
    started: float
    started_wall: float = field(default_factory=time.time)
    history_truncated: bool = False
    exchanges_in_view: int = 0
    budget: RequestBudget | None = None
    tool: str | None = None
    tool_executed: bool = False
    tool_call_audit: list[JSONObject] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    passages_published: bool = True
    fallback_reason: str | None = None
    blocked_category: str | None = None
    finish_reason: FinishReason = "stop"

    def result(self, response: AnswerResponse, annotation: Annotation) -> AnswerResult:
        return AnswerResult(
            route=self.route,
            response=response,
            annotation=annotation,
            exclude=_not_asked(self.req) | _absent(response),
            passages=self.passages if self.passages_published else [],
            blocked_category=self.blocked_category,
            finish_reason=self.finish_reason,
        )


def _not_asked(req: QueryRequest) -> Exclusions:
    """The opt-in fields the request did not ask for: absent from the body, not null."""
    asked = {"grounding"} if req.include_grounding else set()
    if req.include_provenance:
        asked.update({"used_docs", "tool_call_audit", "model_call_log"})
    return {name: True for name in OPT_IN_FIELDS if name not in asked}


def _absent(response: AnswerResponse) -> Exclusions:
    """The fields that appear only when set: v1 ``artifacts`` (offered) and ``faithfulness.checked``
    (false)."""
    out: Exclusions = {}
    if isinstance(response, QueryV1Response):
        if response.artifacts is None:
            out["artifacts"] = True
    elif response.faithfulness.checked is None:
        out["faithfulness"] = {"checked"}
    return out


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def cited_keys(annotation: Annotation, gate: V1Gate | None) -> list[str]:
    """The passage keys the published answer cites, in order: v1 cites what its gate kept."""
    if gate is not None:
        kept = (k for entry in gate.claim_map for k in json_list(entry["citation_keys"]))
        return list(dict.fromkeys(k for k in kept if isinstance(k, str)))
    keys: list[str] = []
    for claim in annotation.claims:
        invalid = json_list(claim["invalid_citation_keys"])
        for key in json_list(claim["citation_keys"]):
            if isinstance(key, str) and key not in invalid and key not in keys:
                keys.append(key)
    return keys


def used_docs(passages: list[Passage]) -> list[dict[str, Any]]:
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


def _duration_ms(call: JSONObject) -> float:
    value = call.get("duration_ms", 0.0)  # the tool runner's audit entry (agent/tools/base.py) sets it
    return float(value) if isinstance(value, int | float) else 0.0


def _common_fields(
    record: AnswerRecord,
    answer: str,
    annotation: Annotation,
    gate: V1Gate | None,
    *,
    refusal: bool,
    models: dict[str, dict[str, str]],
    prompt_version: str,
) -> dict[str, Any]:
    """The fields every answer body has, whatever its route."""
    by_key = {p.key: p for p in record.passages}
    keys = cited_keys(annotation, gate if record.route == "v1" and not refusal else None)
    search_calls = [a for a in record.tool_call_audit if a.get("tool") in _SEARCH_TOOLS]
    budget = record.budget
    return {
        "answer": answer,
        "trace_id": record.trace_id,
        "history_truncated": record.history_truncated,
        "history_exchanges_in_view": record.exchanges_in_view,
        "citations": [dict(by_key[k].citation(), citation_key=k) for k in keys if k in by_key],
        "tool": record.tool,
        "tool_executed": record.tool_executed,
        "fallback_used": refusal,
        "fallback_reason": record.fallback_reason,
        "model": models,
        "prompt_template_version": prompt_version,
        "usage": budget.usage() if budget is not None else dict(_NO_USAGE),
        "retrieval": {
            "queries": len(search_calls),
            "passages_shown": len(record.passages),
            "documents": len({p.chunk.document_id for p in record.passages if p.chunk is not None}),
            "latency_ms": round(sum(_duration_ms(a) for a in search_calls), 3),
        },
        "created_at": now_iso(),
        "grounding": annotation.grounding_details,
        "used_docs": used_docs(record.passages),
        "tool_call_audit": record.tool_call_audit,
        "model_call_log": budget.records_as_dicts() if budget is not None else [],
    }


def answer_result(
    record: AnswerRecord,
    answer: str,
    annotation: Annotation,
    gate: V1Gate | None = None,
    *,
    refusal: bool = False,
    models: dict[str, dict[str, str]],
    prompt_version: str,
    conversation_id: str | None = None,
) -> AnswerResult:
    """The typed response of the route, with what its dump leaves out. A v1 or v2 answer names its
    ``conversation_id``; its ``message_id`` is set once the turn is stored (:meth:`AnswerResult.
    with_message_id`). A playground run gets its own run id and no conversation."""
    common = _common_fields(
        record, answer, annotation, gate, refusal=refusal, models=models, prompt_version=prompt_version
    )
    response: AnswerResponse
    if record.route == "playground":
        response = PlaygroundResponse(
            **common,
            **_v2_fields(annotation),
            playground_run_id=uuid.uuid4().hex,
            latency_ms=round((time.perf_counter() - record.started) * 1000, 3),
            editorial_prompt_applied=models["agent"]["engine"] != "embedded",
        )
        return record.result(response, annotation)
    if conversation_id is None:
        raise ValueError("a v1 or v2 answer belongs to a conversation")
    ids = {"conversation_id": conversation_id, "message_id": ""}  # the message id: once stored
    if record.route == "v1":
        kept = gate.claim_map if gate is not None and not refusal else []
        response = QueryV1Response(
            **common,
            **ids,
            claim_map=kept,
            dropped_claims_count=gate.dropped_count if gate is not None else 0,
            dropped_claim_reasons=gate.dropped_reasons if gate is not None else {},
            provenance_complete=gate.provenance_complete if gate is not None else True,
            claims_supported=gate.claims_supported if gate is not None else annotation.claims_supported,
            claims_total=gate.claims_total if gate is not None else annotation.claims_total,
            grounding_rate=gate.grounding_rate if gate is not None else annotation.grounding_rate,
        )
    else:
        response = QueryV2Response(**common, **_v2_fields(annotation), **ids)
    return record.result(response, annotation)


def _v2_fields(annotation: Annotation) -> dict[str, Any]:
    return {
        "claims": annotation.claims,
        "framing": annotation.framing,
        "faithfulness": annotation.faithfulness,
        "claims_supported": annotation.claims_supported,
        "claims_total": annotation.claims_total,
        "grounding_rate": annotation.grounding_rate,
    }


def stored_body(result: AnswerResult) -> JSONObject:
    """The copy of an answer a conversation keeps: the response with no opt-in fields (its message id still
    empty: the store gives it), the v2 faithfulness kept apart."""
    exclude = {name: True for name in OPT_IN_FIELDS} | _absent(result.response)
    stored: JSONObject = result.response.model_dump(mode="json", by_alias=True, exclude=exclude)
    stored["v2_faithfulness"] = result.annotation.faithfulness if result.route == "v2" else None
    return stored


def search_result(hit: SearchHit) -> JSONObject:
    """The fields every search result carries (CLI ``search --json`` lines and ``POST /search``)."""
    c = hit.chunk
    return {
        "document_id": c.document_id,
        "document_title": c.document_title,
        "chunk_id": c.chunk_id,
        "source": c.source,
        "legal_reference": c.legal_reference,
        "score": float(hit.score),
        "text": c.text,
    }
