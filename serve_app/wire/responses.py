"""What the JSON and SSE writers are handed for one answer, and the fields of one search result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from retrieval.types import SearchHit
from serve_app.answer.segments import Passage

Route = Literal["v1", "v2", "playground"]


@dataclass
class AnswerResult:
    """Everything the JSON and SSE writers need; ``body`` is the JSON response."""

    route: Route
    body: dict[str, Any]
    passages: list[Passage] = field(default_factory=list)
    blocked_category: str | None = None
    finish_reason: str = "stop"


def search_result(hit: SearchHit) -> dict[str, Any]:
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
