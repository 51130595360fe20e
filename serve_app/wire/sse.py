"""The one SSE path: every event is framed here, and every stream ends with exactly one terminal frame."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from serve_app.wire.responses import AnswerResult

DELTA_CHARS = 160  # answer text per answer.delta frame


def frame(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


def error_frame(status: int, error: str, detail: str) -> str:
    return frame("error", {"status": status, "error": error, "detail": detail})


def split_text(text: str, size: int = DELTA_CHARS) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


def _citation_frames(result: AnswerResult) -> Iterator[str]:
    for citation in result.body.get("citations", []):
        yield frame("citation", citation)


def _passage_frames(result: AnswerResult) -> Iterator[str]:
    for p in result.passages:
        data: dict[str, Any] = {
            "kind": p.kind,
            "citation_key": p.key,
            "text": p.text,
            "chunk_id": p.chunk.chunk_id if p.chunk is not None else None,
        }
        data.update({k: v for k, v in p.citation().items() if k not in data})
        yield frame("passage", data)


def v2_answer_frames(result: AnswerResult) -> Iterator[str]:
    """message.start, trace, citation*, guard.blocked | passage*, annotations, answer.delta*, done."""
    body = result.body
    schema = body.get("schema")
    yield frame(
        "message.start",
        {
            "conversation_id": body.get("conversation_id"),
            "message_id": body.get("message_id"),
            "schema": schema,
        },
    )
    yield frame(
        "trace", {"trace_id": body["trace_id"], "tool": body["tool"], "tool_executed": body["tool_executed"]}
    )
    yield from _citation_frames(result)
    if body.get("fallback_reason") == "policy_blocked":
        yield frame(
            "guard.blocked", {"fallback_reason": "policy_blocked", "category": result.blocked_category}
        )
    else:
        yield from _passage_frames(result)
    faith = dict(body["faithfulness"])
    annotations = {
        **faith,
        "fallback_used": body["fallback_used"],
        "fallback_reason": body["fallback_reason"],
        "claims_supported": body["claims_supported"],
        "claims_total": body["claims_total"],
        "grounding_rate": body["grounding_rate"],
        "claims": [{k: v for k, v in c.items() if k not in ("text", "citations")} for c in body["claims"]],
        "framing": [{k: v for k, v in f.items() if k != "text"} for f in body["framing"]],
    }
    yield frame("annotations", annotations)
    for piece in split_text(body["answer"]):
        yield frame("answer.delta", {"text": piece})
    yield frame(
        "done", {"finish_reason": result.finish_reason, "history_truncated": body["history_truncated"]}
    )


def v1_answer_frames(result: AnswerResult) -> Iterator[str]:
    """The v1 stream: its ``faithfulness`` frame counts removed sentences."""
    body = result.body
    yield frame(
        "message.start",
        {
            "conversation_id": body.get("conversation_id"),
            "message_id": body.get("message_id"),
            "schema": None,
        },
    )
    yield frame(
        "trace", {"trace_id": body["trace_id"], "tool": body["tool"], "tool_executed": body["tool_executed"]}
    )
    yield from _citation_frames(result)
    if body.get("fallback_reason") == "policy_blocked":
        yield frame(
            "guard.blocked", {"fallback_reason": "policy_blocked", "category": result.blocked_category}
        )
    else:
        yield from _passage_frames(result)
    yield frame(
        "faithfulness",
        {
            "removed": body["dropped_claims_count"],
            "kept": len(body["claim_map"]),
            "dropped_claim_reasons": body["dropped_claim_reasons"],
            "claims_supported": body["claims_supported"],
            "claims_total": body["claims_total"],
            "grounding_rate": body["grounding_rate"],
        },
    )
    for piece in split_text(body["answer"]):
        yield frame("answer.delta", {"text": piece})
    yield frame(
        "done", {"finish_reason": result.finish_reason, "history_truncated": body["history_truncated"]}
    )
