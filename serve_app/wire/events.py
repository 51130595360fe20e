"""SSE event payloads: the ``data`` of each frame of ``/query/stream`` and ``/query/v2/stream``, by event name
(:data:`SSE_EVENTS`). ``wire/sse.py`` builds every frame from these models; the published JSON Schemas come
from the same models (``wire/openapi.py``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from serve_app.vocabulary import FallbackReason, UnverifiedReason, Verdict
from serve_app.wire.schemas import Artifact, Citation, Faithfulness, Layout, Offsets, WireModel


class ToolStartedEvent(WireModel):
    call_id: str
    tool: str
    arguments: dict[str, Any]


class ToolFinishedEvent(WireModel):
    call_id: str
    tool: str
    status: str
    result_count: int
    duration_ms: float


class MessageStartEvent(WireModel):
    conversation_id: str | None
    message_id: str | None
    schema_: Literal["annotate-v2"] | None = Field(None, alias="schema")
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, json_schema_serialization_defaults_required=True
    )


class TraceEvent(WireModel):
    trace_id: str
    tool: str | None
    tool_executed: bool


class CitationEvent(Citation):
    citation_key: str


class PassageEvent(WireModel):
    model_config = ConfigDict(extra="allow", json_schema_serialization_defaults_required=True)
    kind: Literal["chunk", "tool"]
    citation_key: str
    text: str
    chunk_id: str | None = None


class GuardBlockedEvent(WireModel):
    fallback_reason: Literal["policy_blocked"] = "policy_blocked"
    category: str | None = None


class ClaimOffsets(Offsets):
    kind: Literal["fact", "framing"]
    layout: Layout
    citation_keys: list[str]
    verdict: Verdict
    unverified_reason: UnverifiedReason | None
    invalid_citation_keys: list[str]


class FramingOffsets(Offsets):
    layout: Layout


class AnnotationsEvent(Faithfulness):
    fallback_used: bool
    fallback_reason: FallbackReason | None
    claims_supported: int
    claims_total: int
    grounding_rate: float | None
    claims: list[ClaimOffsets]
    framing: list[FramingOffsets]


class V1FaithfulnessEvent(WireModel):
    """``/query/stream``: counts of removed sentences (not the v2 counts)."""

    removed: int
    kept: int
    dropped_claim_reasons: dict[str, int]
    claims_supported: int
    claims_total: int
    grounding_rate: float | None


class AnswerDeltaEvent(WireModel):
    text: str


class ArtifactsEvent(WireModel):
    """``/query/stream`` with ``offer_artifacts: true``: the answer's files, after its text, before done."""

    artifacts: list[Artifact]


class DoneEvent(WireModel):
    finish_reason: Literal["stop", "refusal", "policy_blocked"]
    history_truncated: bool


class ErrorEvent(WireModel):
    status: int
    error: str
    detail: str


SSE_EVENTS: dict[str, type[BaseModel]] = {
    "tool.started": ToolStartedEvent,
    "tool.finished": ToolFinishedEvent,
    "message.start": MessageStartEvent,
    "trace": TraceEvent,
    "citation": CitationEvent,
    "passage": PassageEvent,
    "guard.blocked": GuardBlockedEvent,
    "annotations": AnnotationsEvent,
    "faithfulness": V1FaithfulnessEvent,
    "answer.delta": AnswerDeltaEvent,
    "artifacts": ArtifactsEvent,
    "done": DoneEvent,
    "error": ErrorEvent,
}
