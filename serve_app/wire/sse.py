"""The one SSE path: every frame is built from the pydantic event model that also generates its published
JSON Schema (:data:`~serve_app.wire.events.SSE_EVENTS`), one generator writes the v1 and the v2 streams,
and every stream ends with exactly one terminal frame."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from models.json_types import JSON, json_list, json_objects, json_text
from serve_app.wire.events import (
    SSE_EVENTS,
    AnnotationsEvent,
    AnswerDeltaEvent,
    ArtifactsEvent,
    CitationEvent,
    DoneEvent,
    ErrorEvent,
    GuardBlockedEvent,
    MessageStartEvent,
    PassageEvent,
    TraceEvent,
    V1FaithfulnessEvent,
)
from serve_app.wire.responses import AnswerResult

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


def _v2_annotations(body: JSON) -> AnnotationsEvent:
    faithfulness = body["faithfulness"]
    return AnnotationsEvent.model_validate(
        {
            **(faithfulness if isinstance(faithfulness, Mapping) else {}),
            "fallback_used": body["fallback_used"],
            "fallback_reason": body["fallback_reason"],
            "claims_supported": body["claims_supported"],
            "claims_total": body["claims_total"],
            "grounding_rate": body["grounding_rate"],
            "claims": [
                {k: v for k, v in c.items() if k not in ("text", "citations")}
                for c in json_objects(body["claims"])
            ],
            "framing": [{k: v for k, v in f.items() if k != "text"} for f in json_objects(body["framing"])],
        }
    )


def _v1_faithfulness(body: JSON) -> V1FaithfulnessEvent:
    """/query/stream counts removed sentences, not the v2 counts."""
    return V1FaithfulnessEvent.model_validate(
        {
            "removed": body["dropped_claims_count"],
            "kept": len(json_list(body["claim_map"])),
            "dropped_claim_reasons": body["dropped_claim_reasons"],
            "claims_supported": body["claims_supported"],
            "claims_total": body["claims_total"],
            "grounding_rate": body["grounding_rate"],
        }
    )


def answer_events(result: AnswerResult) -> Iterator[BaseModel]:
    """message.start, trace, citation*, guard.blocked | passage*, then the marks (v2 ``annotations``, v1
    ``faithfulness``), answer.delta*, (v1 with offer_artifacts) artifacts, done."""
    body = result.body
    v1 = result.route == "v1"
    yield MessageStartEvent(
        conversation_id=body.get("conversation_id"),
        message_id=body.get("message_id"),
        schema_=None if v1 else body.get("schema"),
    )
    yield TraceEvent(trace_id=body["trace_id"], tool=body["tool"], tool_executed=body["tool_executed"])
    for citation in json_objects(body.get("citations")):
        yield CitationEvent.model_validate(citation)
    if body.get("fallback_reason") == "policy_blocked":
        yield GuardBlockedEvent(category=result.blocked_category)
    else:
        yield from _passage(result)
    yield _v1_faithfulness(body) if v1 else _v2_annotations(body)
    for piece in split_text(json_text(body["answer"])):
        yield AnswerDeltaEvent(text=piece)
    if v1 and "artifacts" in body:  # offer_artifacts: true
        yield ArtifactsEvent.model_validate({"artifacts": body["artifacts"]})
    yield DoneEvent.model_validate(
        {"finish_reason": result.finish_reason, "history_truncated": body["history_truncated"]}
    )


def answer_frames(result: AnswerResult) -> Iterator[str]:
    for event in answer_events(result):
        yield frame(event)
