"""Public wire models: request bodies and JSON responses (the SSE event payloads are in ``events.py``).

Requests are strict (unknown fields, wrong types → 422). Responses are built by the pipeline and dumped
once, by their JSON writer (``wire/responses.py``: ``AnswerResult.json_body``), which leaves out the opt-in
fields a request did not ask for (absent, not null) while keeping the nulls the contract spells out
(``fallback_reason``, ``unverified_reason``, ``grounding_rate``).
The committed JSON Schemas in ``serve_app/wire/json_schemas/`` and ``/openapi.json`` come from these models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from serve_app.vocabulary import FallbackReason, UnverifiedReason, V1FallbackReason, Verdict, Verification
from serve_app.wire.strict_types import FalseOnly, JsonInt, NotBlank

WIRE_SCHEMA_VERSION = "1"

Layout = Literal["paragraph", "heading", "list_item", "continue", "table_header", "table_row"]
Status3 = Literal["complete", "unavailable", "skipped"]


# A question: the length limits are Field's, and a text of only white space is refused like an empty one
# (the published schema says so with a pattern).
QueryText = NotBlank


class WireRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class WireModel(BaseModel):
    # Defaults are always serialised, so the published schemas mark them required (openapi.py then
    # relaxes exactly the keys that may be absent: the opt-ins and ``checked``).
    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)


# ---------------------------------------------------------------- requests


# One invented request per body, published as the schema's ``examples`` (schemathesis's examples phase sends
# them; a generated client's docs show them).
QUESTION_EXAMPLE = "Siapa yang menetapkan qanun ini?"


class QueryRequest(WireRequest):
    """Body of ``/query`` and ``/query/stream``."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"query": QUESTION_EXAMPLE}]})

    query: QueryText = Field(min_length=1, max_length=4000, description="The question, 1-4,000 characters.")
    conversation_id: str | None = None
    document_ids: list[str] | None = None
    selection: str | None = Field(None, description="Name of a document selection from the config.")
    include_grounding: bool = False
    include_provenance: bool = False
    offer_artifacts: bool = False
    accept_annotations: bool | None = Field(None, description="Accepted and ignored.")


class QueryV2Request(QueryRequest):
    """Body of ``/query/v2`` and ``/query/v2/stream``: ``offer_artifacts`` may only be false."""

    offer_artifacts: FalseOnly = False


class PlaygroundRequest(QueryV2Request):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"query": QUESTION_EXAMPLE, "editorial_prompt": "Jawab dalam dua kalimat."}]
        }
    )
    editorial_prompt: str = Field(min_length=1, max_length=2000)


class SearchRequest(WireRequest):
    model_config = ConfigDict(json_schema_extra={"examples": [{"query": "pajak kendaraan", "top_k": 5}]})

    query: QueryText = Field(min_length=1, max_length=4000)
    top_k: JsonInt = Field(10, ge=1, le=50, description="1-50; 2.0 counts as 2, as in JSON Schema.")
    document_ids: list[str] | None = None
    selection: str | None = None
    include_provenance: bool = False


# ---------------------------------------------------------------- shared pieces


class Citation(WireModel):
    """Citation metadata of one indexed chunk (or a tool result's identity)."""

    model_config = ConfigDict(extra="allow", json_schema_serialization_defaults_required=True)
    document_id: str | None = None
    document_title: str | None = None
    chunk_id: str | None = None
    citation_key: str | None = None


class CitationPair(WireModel):
    citation_key: str
    citation: Citation


class Offsets(WireModel):
    start: int = Field(description="Start in code points (Python string index).")
    end: int = Field(description="Exclusive end in code points.")
    start_utf16: int = Field(description="Start in UTF-16 code units (JavaScript string index).")
    end_utf16: int = Field(description="Exclusive end in UTF-16 code units.")


class Claim(Offsets):
    text: str
    citation_keys: list[str]
    citations: list[CitationPair]
    verdict: Verdict
    unverified_reason: UnverifiedReason | None
    invalid_citation_keys: list[str]
    kind: Literal["fact", "framing"]
    layout: Layout


class FramingSpan(Offsets):
    text: str
    layout: Layout


class Grounding(WireModel):
    claims_supported: int
    claims_total: int
    grounding_rate: float | None


class UnverifiedReasons(WireModel):
    deadline: int = 0
    budget: int = 0
    judge_unavailable: int = 0
    unparseable: int = 0
    disputed: int = 0


class Faithfulness(WireModel):
    mechanism: Literal["annotate-v2"] = "annotate-v2"
    judge_status: Status3
    framing_check: Status3
    claims_total: int
    supported: int
    unsupported: int
    unverified: int
    uncited: int
    invalid_citation: int
    from_conversation: int
    unverified_reasons: UnverifiedReasons
    framing_total: int
    unlocated_total: int
    verification: Verification
    grounding: Grounding
    checked: Literal[False] | None = Field(
        None, description="Present (false) only for context_budget_exhausted; absent otherwise."
    )


class ModelInfo(WireModel):
    engine: str
    model: str


class Usage(WireModel):
    model_calls: int
    prompt_tokens: int
    completion_tokens: int


class RetrievalStats(WireModel):
    queries: int
    passages_shown: int
    documents: int
    latency_ms: float


class ToolCall(WireModel):
    model_config = ConfigDict(extra="allow", json_schema_serialization_defaults_required=True)
    tool: str
    status: str


class GroundingDetail(WireModel):
    """Opt-in (``include_grounding``): per-claim evidence the judge used."""

    model_config = ConfigDict(extra="allow", json_schema_serialization_defaults_required=True)
    claim_index: int
    verdict: str
    reasons: list[str]


class AnswerBase(WireModel):
    answer: str
    trace_id: str
    history_truncated: bool = False
    history_exchanges_in_view: int = 0
    citations: list[Citation]
    tool: str | None
    tool_executed: bool
    fallback_used: bool
    fallback_reason: FallbackReason | None
    claims_supported: int
    claims_total: int
    grounding_rate: float | None
    # The five answer.v1 fields a consumer of that schema expects.
    model: dict[str, ModelInfo]
    prompt_template_version: str
    usage: Usage
    retrieval: RetrievalStats
    created_at: str
    # Opt-in, JSON only: absent unless asked for.
    grounding: list[GroundingDetail] | None = None
    used_docs: list[Citation] | None = None
    tool_call_audit: list[ToolCall] | None = None
    # Each record as CallRecord.to_dict() writes it; ``object``, not Any: the same schema (any object),
    # and the pipeline, ingress and catalog that read these models see no Any.
    model_call_log: list[dict[str, object]] | None = None


class QueryV2Response(AnswerBase):
    schema_: Literal["annotate-v2"] = Field("annotate-v2", alias="schema")
    conversation_id: str
    message_id: str
    claims: list[Claim]
    framing: list[FramingSpan]
    faithfulness: Faithfulness
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, json_schema_serialization_defaults_required=True
    )


class PlaygroundResponse(AnswerBase):
    schema_: Literal["annotate-v2"] = Field("annotate-v2", alias="schema")
    claims: list[Claim]
    framing: list[FramingSpan]
    faithfulness: Faithfulness
    playground_run_id: str
    published: Literal[False] = False
    latency_ms: float
    # False when the agent's writer is the embedded (extractive) one: it takes no prompt, so the editorial
    # prompt could not change this answer. Said in the response, never a silent no-op.
    editorial_prompt_applied: bool
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, json_schema_serialization_defaults_required=True
    )


class ClaimMapEntry(Offsets):
    text: str
    citation_keys: list[str]
    citations: list[CitationPair]


XLSX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


class Artifact(WireModel):
    """A file offered with a v1 answer (``offer_artifacts: true``), fetched at ``url`` until
    ``expires_at``."""

    id: str
    name: str
    media_type: Literal[
        "text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    ]
    url: str = Field(description="Path of the fetch route; same credentials as the request that made it.")
    expires_at: str
    rows: int = Field(description="Data rows (the header row not counted).")


class QueryV1Response(AnswerBase):
    fallback_reason: V1FallbackReason | None  # type: ignore[assignment]
    conversation_id: str
    message_id: str
    claim_map: list[ClaimMapEntry]
    dropped_claims_count: int
    dropped_claim_reasons: dict[str, int]
    provenance_complete: bool
    # Present only when the request set offer_artifacts: true (JSON route).
    artifacts: list[Artifact] | None = None


class SearchResult(WireModel):
    model_config = ConfigDict(extra="allow", json_schema_serialization_defaults_required=True)
    document_id: str
    document_title: str
    chunk_id: str
    source: str
    legal_reference: str | None
    score: float
    text: str
    citation: Citation
    provenance: dict[str, dict[str, float | int | None]] | None = None


class SearchResponse(WireModel):
    query: str
    results: list[SearchResult]
    fallback_reason: Literal["source_scope_empty"] | None = None


class ConversationCreated(WireModel):
    conversation_id: str
    created_at: str


class ConversationView(WireModel):
    conversation_id: str
    route: Literal["v1", "v2"] | None
    messages: list[dict[str, Any]]


class ErrorBody(WireModel):
    error: str = Field(description="A fixed code, e.g. not_found.")
    detail: str | list[dict[str, Any]] = Field(description="Fixed text, or the failing fields on 422.")


OPT_IN_FIELDS = ("grounding", "used_docs", "tool_call_audit", "model_call_log")
