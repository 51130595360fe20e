"""Constructed /query/v2/stream bodies for the browser tests: the states the demo corpus cannot produce
(every verdict at once, non-BMP text, a stream cut short). Each answer is built from pieces the way the server
composes it, with offsets in code points and UTF-16 units, counts by the contract's rules, and every frame
written by the service's own SSE writer (its pydantic event models); ``checked_frames`` runs the contract
suite's stream checker over the whole body, so a constructed stream is a contract-valid one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from models.json_types import JSONObject
from serve_app.answer.annotation import faithfulness_report
from serve_app.wire.sse import event_frame, split_text
from tests.contract.checks import parse_sse, utf16_len
from tests.contract.stream_checks import assert_v2_stream

JUDGED = ("supported", "unsupported", "unverified")


@dataclass(frozen=True)
class Piece:
    """One run of the answer: ``kind`` "fact"/"framing" with a ``verdict`` is a claim, "framing" without
    one a framing span, "layout" what the server writes between segments, "uncovered" unlocated text."""

    text: str
    kind: str = "layout"
    verdict: str | None = None
    cites: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    reason: str | None = None
    layout: str = "paragraph"


@dataclass
class Built:
    answer: str
    frames: list[str] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)

    @property
    def body(self) -> str:
        return "".join(self.frames)

    def cut_before(self, event: str, *, nth: int = 1) -> str:
        """The body up to (not including) the ``nth`` frame of ``event``: a stream that broke off there."""
        seen = 0
        for i, piece in enumerate(self.frames):
            if piece.startswith(f"event: {event}\n"):
                seen += 1
                if seen == nth:
                    return "".join(self.frames[:i])
        raise AssertionError(f"no frame {event} #{nth}")


def _faithfulness(claims: list[JSONObject], framing: int, unlocated: int) -> JSONObject:
    """The server's own report over the constructed claims (like the frames, built by the service's code;
    ``assert_v2_stream`` checks its counts against the contract independently). The judge status follows
    the verdicts: nothing judged is "skipped", an ``unverified`` verdict means the judge was unavailable."""
    judged = [c for c in claims if c["verdict"] in JUDGED]
    if not judged:
        status = "skipped"
    elif any(c["verdict"] == "unverified" for c in judged):
        status = "unavailable"
    else:
        status = "complete"
    return faithfulness_report(
        claims,
        framing_total=framing,
        unlocated_total=unlocated,
        judge_status=status,
        framing_check="complete",
    )


def build(pieces: list[Piece], passages: dict[str, str], *, conversation_id: str = "c" * 32) -> Built:
    """The frames of one answer: message.start, trace, a citation and a passage frame per key of
    ``passages``, annotations, answer.delta, done."""
    answer, unlocated = "", 0
    claims: list[JSONObject] = []
    framing: list[JSONObject] = []
    for piece in pieces:
        start, start16 = len(answer), utf16_len(answer)
        answer += piece.text
        offsets = {"start": start, "end": len(answer), "start_utf16": start16, "end_utf16": utf16_len(answer)}
        if piece.verdict is not None:
            claims.append(
                {
                    **offsets,
                    "kind": piece.kind,
                    "layout": piece.layout,
                    "citation_keys": list(piece.cites),
                    "verdict": piece.verdict,
                    "unverified_reason": piece.reason,
                    "invalid_citation_keys": list(piece.invalid),
                }
            )
        elif piece.kind == "framing":
            framing.append({**offsets, "layout": piece.layout})
        elif piece.kind == "uncovered":
            unlocated += 1
    built = Built(answer, claims=claims)
    add = built.frames.append
    add(
        event_frame(
            "message.start",
            {
                "conversation_id": conversation_id,
                "message_id": "m" * 32,
                "schema": "annotate-v2",
            },
        )
    )
    add(event_frame("trace", {"trace_id": "t" * 32, "tool": "search", "tool_executed": True}))
    for n, key in enumerate(passages):
        citation = {
            "document_id": f"dokumen-{n}",
            "document_title": f"Dokumen contoh {n + 1} (fiktif)",
            "chunk_id": f"dokumen-{n}:00001",
            "legal_reference": f"Qanun Contoh Nomor {n + 1} Tahun 2023, Pasal {n + 2}",
            "section_path": ["BAB I", f"Pasal {n + 2}"],
        }
        add(event_frame("citation", {**citation, "citation_key": key}))
    for n, (key, text) in enumerate(passages.items()):
        add(
            event_frame(
                "passage",
                {
                    "kind": "chunk",
                    "citation_key": key,
                    "text": text,
                    "chunk_id": f"dokumen-{n}:00001",
                    "document_id": f"dokumen-{n}",
                    "document_title": f"Dokumen contoh {n + 1} (fiktif)",
                },
            )
        )
    report = _faithfulness(claims, len(framing), unlocated)
    grounding = report["grounding"]
    assert isinstance(grounding, dict)
    add(
        event_frame(
            "annotations",
            {
                **report,
                "fallback_used": False,
                "fallback_reason": None,
                **grounding,
                "claims": claims,
                "framing": framing,
            },
        )
    )
    for text in split_text(answer, 40):  # small deltas: the client must join them, pairs included
        add(event_frame("answer.delta", {"text": text}))
    add(event_frame("done", {"finish_reason": "stop", "history_truncated": False}))
    assert_v2_stream(parse_sse(built.body))  # every frame valid against its schema, counts and coverage
    return built
