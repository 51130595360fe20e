"""The one SSE path: every frame is built from the pydantic event model that also generates its published
JSON Schema (:data:`~serve_app.wire.events.SSE_EVENTS`), one generator writes the v1 and the v2 streams,
and every stream ends with exactly one terminal frame."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from models.json_types import JSON
from serve_app.wire.events import (
    SSE_EVENTS,
    AnnotationsEvent,
    AnswerDeltaEvent,
    ArtifactsEvent,
    CitationEvent,
    ClaimOffsets,
    DoneEvent,
    ErrorEvent,
    FramingOffsets,
    GuardBlockedEvent,
    MessageStartEvent,
    PassageEvent,
    TraceEvent,
    V1FaithfulnessEvent,
)
from serve_app.wire.responses import AnswerResponse, AnswerResult
from serve_app.wire.schemas import PlaygroundResponse, QueryV1Response, QueryV2Response

DELTA_CHARS = 160  # answer text per answer.delta frame
_EVENT_OF: dict[type[BaseModel], str] = {model: name for name, model in SSE_EVENTS.items()}


def frame(event: BaseModel) -> str:
    """``event: NAME`` and ``data: JSON`` of one event model (its name is the model's in SSE_EVENTS)."""
    data = event.model_dump(mode="json", by_alias=True)
    if data.get("checked", False) is None:  # as in the JSON body: ``checked`` appears only when false
        del data["checked"]
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {_EVENT_OF[type(event)]}\ndata: {text}\n\n"


def event_frame(name: str, data: JSON) -> str:
    """A frame of an event that arrives as a dict (the agent's tool events), checked by its model."""
    return frame(SSE_EVENTS[name].model_validate(data))


def error_frame(status: int, error: str, detail: str) -> str:
    return frame(ErrorEvent(status=status, error=error, detail=detail))


def split_text(text: str, size: int = DELTA_CHARS) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


def _passage(result: AnswerResult) -> Iterator[PassageEvent]:
    for p in result.passages:
        data: dict[str, Any] = {
            "kind": p.kind,
            "citation_key": p.key,
            "text": p.text,
            "chunk_id": p.chunk.chunk_id if p.chunk is not None else None,
        }
        data.update({k: v for k, v in p.citation().items() if k not in data})
        yield PassageEvent.model_validate(data)


def _v2_annotations(response: QueryV2Response | PlaygroundResponse) -> AnnotationsEvent:
    """The faithfulness report with the answer's counts, and its claims and framing without their text."""
    return AnnotationsEvent.model_validate(
        {
            **dict(response.faithfulness),
            "fallback_used": response.fallback_used,
            "fallback_reason": response.fallback_reason,
            "claims_supported": response.claims_supported,
            "claims_total": response.claims_total,
            "grounding_rate": response.grounding_rate,
            "claims": [ClaimOffsets.model_validate(c, from_attributes=True) for c in response.claims],
            "framing": [FramingOffsets.model_validate(f, from_attributes=True) for f in response.framing],
        }
    )


def _v1_faithfulness(response: QueryV1Response) -> V1FaithfulnessEvent:
    """/query/stream counts removed sentences, not the v2 counts."""
    return V1FaithfulnessEvent(
        removed=response.dropped_claims_count,
        kept=len(response.claim_map),
        dropped_claim_reasons=response.dropped_claim_reasons,
        claims_supported=response.claims_supported,
        claims_total=response.claims_total,
        grounding_rate=response.grounding_rate,
    )


def _message_start(response: AnswerResponse) -> MessageStartEvent:
    if isinstance(response, PlaygroundResponse):  # a playground run has no conversation
        return MessageStartEvent(conversation_id=None, message_id=None, schema_=response.schema_)
    schema = None if isinstance(response, QueryV1Response) else response.schema_
    return MessageStartEvent(
        conversation_id=response.conversation_id, message_id=response.message_id, schema_=schema
    )


def answer_events(result: AnswerResult) -> Iterator[BaseModel]:
    """message.start, trace, citation*, guard.blocked | passage*, then the marks (v2 ``annotations``, v1
    ``faithfulness``), answer.delta*, (v1 with offer_artifacts) artifacts, done: read from the typed
    response (and the result's passages)."""
    response = result.response
    yield _message_start(response)
    yield TraceEvent(trace_id=response.trace_id, tool=response.tool, tool_executed=response.tool_executed)
    for citation in response.citations:
        yield CitationEvent.model_validate(dict(citation))  # its fields and the extra ones it carries
    if response.fallback_reason == "policy_blocked":
        yield GuardBlockedEvent(category=result.blocked_category)
    else:
        yield from _passage(result)
    yield _v1_faithfulness(response) if isinstance(response, QueryV1Response) else _v2_annotations(response)
    for piece in split_text(response.answer):
        yield AnswerDeltaEvent(text=piece)
    if isinstance(response, QueryV1Response) and response.artifacts is not None:  # offer_artifacts: true
        yield ArtifactsEvent(artifacts=response.artifacts)
    yield DoneEvent(finish_reason=result.finish_reason, history_truncated=response.history_truncated)


def answer_frames(result: AnswerResult) -> Iterator[str]:
    for event in answer_events(result):
        yield frame(event)
