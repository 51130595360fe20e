"""What the judge reads for one claim: the claim text, its passages and their identity as the agent saw
them, held to the judge's contract on the way back."""

from __future__ import annotations

import json
from typing import Any

from judge.aggregate import restate
from judge.batching import unverified
from judge.types import JudgeItem, JudgeResult
from serve_app.answer.segments import ComposedSpan, Passage, passage_identity
from serve_app.vocabulary import JUDGE_VERDICTS, UNVERIFIED_REASONS


def judge_identity(passage: Passage) -> dict[str, str | int | None]:
    """The identity the agent saw with this passage, in the judge's scalar form."""
    identity: dict[str, str | int | None] = {}
    for key, value in passage_identity(passage).items():
        if (
            value is None
            or isinstance(value, str)
            or (isinstance(value, int) and not isinstance(value, bool))
        ):
            identity[key] = value
        else:
            identity[key] = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    if passage.chunk is not None and passage.chunk.context:
        identity["context"] = passage.chunk.context  # shown to the agent as "(konteks: …)"
    return identity


def sanitised(items: list[JudgeItem], raw: Any) -> list[JudgeResult]:
    """The judge's answer held to its contract; anything unusable is unverified, never supported."""
    if not isinstance(raw, list | tuple) or len(raw) != len(items):
        return [unverified(item, "judge_unavailable", "wrong_result_count") for item in items]
    results = []
    for item, result in zip(items, raw, strict=True):
        if not isinstance(result, JudgeResult) or result.verdict not in JUDGE_VERDICTS:
            result = unverified(item, "unparseable", "bad_result")
        elif result.item_id != item.item_id:
            result = unverified(item, "judge_unavailable", "mismatched_result")
        elif (result.verdict == "unverified") != (result.unverified_reason is not None) or (
            result.unverified_reason is not None and result.unverified_reason not in UNVERIFIED_REASONS
        ):
            result = unverified(item, "unparseable", "inconsistent_result")
        results.append(result)
    return results


def _piped(text: str) -> str:
    return text if text.lstrip().startswith("|") else f"| {text} |"


def judged_text(span: ComposedSpan) -> str:
    """A table row is judged whole, as the reader sees it: a Markdown row under its header row."""
    return _piped(span.segment.text) if span.segment.layout == "table_row" else span.segment.text


def judged_context(span: ComposedSpan) -> str:
    """For a table row the context ends with its header row (after any section heading): pipe that line."""
    if span.segment.layout == "table_row" and span.context:
        *before, header = span.context.split("\n")
        return "\n".join([*before, _piped(header)])
    return span.context


def judged_passage(passage: Passage) -> str:
    """Rows of an ingested CSV/XLSX table are stored bare, with their header as the chunk's context; the
    judge reads them as the Markdown table the reader sees, header first, so each cell has its column.
    A computed figure is never judged against the value its tool stated: the judge reads the rows it came
    from and its own recomputation (judge/aggregate.py)."""
    agg = passage.aggregate
    if agg is not None:
        dataset = passage.identity.get("dataset")
        return restate(agg.operation, agg.column, agg.header, agg.rows, dataset=str(dataset or ""))
    chunk = passage.chunk
    if chunk is None or chunk.kind != "table" or "|" not in chunk.context:
        return passage.text
    lines = [line for line in passage.text.split("\n") if line.strip()]
    if not lines or any(line.lstrip().startswith("|") for line in lines):
        return passage.text
    header = chunk.context.strip().split("\n")[-1]
    separator = "| " + " | ".join(["---"] * len(header.strip().strip("|").split("|"))) + " |"
    return "\n".join([_piped(header), separator, *(_piped(line) for line in lines)])
