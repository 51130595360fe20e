"""/query (v1): the answer with every claim that is not ``supported`` removed, from the same annotation
the v2 route publishes whole (CONTRACT.md)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from models.json_types import JSONObject, json_objects
from serve_app.answer.annotation import Annotation, V1Gate
from serve_app.answer.compose import compose, validate_segments
from serve_app.answer.segments import ComposedAnswer, Segment
from serve_app.vocabulary import V1_REFUSAL_REASON


def _drop_reason(claim: dict[str, Any]) -> str:
    if claim["verdict"] == "unverified":
        return f"unverified:{claim['unverified_reason']}"
    return str(claim["verdict"])


def _repaired(
    kept: list[tuple[Segment, JSONObject | None]], dropped: Counter[str]
) -> list[tuple[Segment, JSONObject | None]]:
    """Kept segments with layouts that still compose: table rows whose header was removed, and a
    ``continue`` left first or after a table line, become paragraphs (dropped, as "layout", if their text
    cannot stand as one)."""
    out: list[tuple[Segment, JSONObject | None]] = []
    for segment, claim in kept:
        previous = out[-1][0].layout if out else None
        layout = segment.layout
        if layout == "continue" and previous in (None, "table_header", "table_row"):
            layout = "paragraph"
        elif layout == "table_row" and previous not in ("table_header", "table_row"):
            layout = "paragraph"
        if layout != segment.layout:
            segment = replace(segment, layout=layout)
            if validate_segments([segment]):
                dropped["layout"] += 1
                continue
        out.append((segment, claim))
    return out


def v1_gate(composed: ComposedAnswer, annotation: Annotation, *, min_kept_ratio: float) -> V1Gate:
    """/query (v1): remove every claim that is not ``supported`` (framing judged checkable included), keep
    framing spans, recompose with :func:`compose` so the claim map's offsets are exact. Refused when
    supported / claims_total < ``min_kept_ratio``, when there were claims but none supported, or when
    nothing is left to publish; ``claims_*`` and ``grounding_rate`` are the v2 figures."""
    claims = {(c["start"], c["end"]): c for c in annotation.claims}
    framing = {(f["start"], f["end"]) for f in annotation.framing}
    dropped: Counter[str] = Counter()
    kept: list[tuple[Segment, JSONObject | None]] = []
    block_layout = "paragraph"  # the layout a "continue" falls back to when its block start is gone
    block_start_kept = True
    for span in composed.spans:
        seg, where = span.segment, (span.start, span.end)
        claim = claims.get(where)
        keep = (claim is not None and claim["verdict"] == "supported") or (claim is None and where in framing)
        if seg.layout != "continue":
            block_layout, block_start_kept = seg.layout, keep
        if not keep:
            dropped[_drop_reason(claim) if claim is not None else "unannotated"] += 1
            continue
        if seg.layout == "continue" and not block_start_kept:
            # Its block's start was removed: it starts that block itself rather than join another one.
            seg = replace(
                seg,
                layout=block_layout if block_layout in ("paragraph", "heading", "list_item") else "paragraph",
            )
            if validate_segments([seg]):
                dropped["layout"] += 1
                continue
            block_start_kept = True
        kept.append((seg, claim))
    segments = _repaired(kept, dropped)
    supported, total = annotation.claims_supported, annotation.claims_total
    refused = (
        (bool(annotation.claims) and supported == 0)
        or (total > 0 and supported / total < min_kept_ratio)
        or not segments
    )
    new = compose([s for s, _ in segments]) if segments else ComposedAnswer("", ())
    claim_map: list[JSONObject] = []
    for span, (_, claim) in zip(new.spans, segments, strict=True):
        if claim is None:
            continue
        citations = [dict(pair) for pair in json_objects(claim["citations"])]
        claim_map.append(
            {
                "text": span.segment.text,
                "citation_keys": [pair["citation_key"] for pair in citations],
                "citations": citations,
                "start": span.start,
                "end": span.end,
                "start_utf16": span.start_utf16,
                "end_utf16": span.end_utf16,
            }
        )
    return V1Gate(
        answer=new.answer,
        claim_map=claim_map,
        dropped_count=sum(dropped.values()),
        dropped_reasons=dict(dropped),
        provenance_complete=all(entry["citations"] for entry in claim_map),
        claims_supported=supported,
        claims_total=total,
        grounding_rate=annotation.grounding_rate,
        refused=refused,
        reason=V1_REFUSAL_REASON if refused else None,
    )
