"""The core of ``aceh-rag judge FILE.jsonl``: judge claim/passage pairs offline, for audits and evaluation.

Input lines: ``{"id", "claim", "passage", "document"?, "context"?}``. ``document`` is the document identity,
a title string or an object with ``title``, ``type``, ``number``, ``year``, ``issuer``, ``section`` (and any
other identity key the prompt knows, e.g. ``legal_reference``, ``dataset``, ``period``); ``context`` (an
optional string, our extension) is the reader's context around the claim.

Output: one ``{"id", "verdict", "reasons"}`` per input line, in the same order. ``verdict`` is the final
verdict after the re-check (none for a deterministic judge: judge.recheck); an ``unverified`` one has its
reason first in ``reasons``.

A bad line (not an object, claim or passage missing, empty or not a string, a malformed document) does not
stop the run: it gets ``{"verdict": "unverified", "reasons": ["invalid_input", <what is wrong>]}`` so that
output line *n* still answers input line *n*. Only text that is not JSON at all stops
:func:`parse_jsonl`, with the line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

from judge.base import Judge
from judge.batching import judge_batch
from judge.recheck import RecheckStats, judge_with_recheck
from judge.types import JudgeItem, JudgePassage, JudgeResult
from models.json_types import JSONObject, JSONValue


class JsonlError(ValueError):
    """A line of the input file is not valid JSON."""


def parse_jsonl(path: str | Path) -> list[JSONValue]:
    """The JSON value of every non-blank line of ``path``, in order (non-objects are kept for
    :func:`judge_records` to report). Raises :class:`JsonlError` naming the first line that is not JSON."""
    values: list[JSONValue] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                values.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise JsonlError(
                    f"{path}, line {number}: not valid JSON ({exc.msg} at column {exc.colno})"
                ) from None
    return values


def _identity(document: Any) -> tuple[dict[str, str | int | None], list[str]]:
    """The identity shown with the passage, and what is wrong with ``document`` (empty when fine)."""
    if document is None:
        return {}, []
    if isinstance(document, str):
        return ({"title": document} if document.strip() else {}), []
    if not isinstance(document, dict):
        return {}, ["document_not_string_or_object"]
    identity: dict[str, str | int | None] = {}
    problems: list[str] = []
    for key, value in document.items():
        if value is None or (isinstance(value, str | int) and not isinstance(value, bool)):
            identity[str(key)] = value
        elif isinstance(value, float) and value.is_integer():
            identity[str(key)] = int(value)
        else:
            problems.append(f"document_field_not_scalar:{key}")
    return identity, problems


def _to_item(record: object, item_id: str) -> tuple[JudgeItem | None, list[str]]:
    if not isinstance(record, dict):
        return None, ["not_an_object"]
    problems: list[str] = []
    for field in ("claim", "passage"):
        value = record.get(field)
        if field not in record:
            problems.append(f"missing_{field}")
        elif not isinstance(value, str):
            problems.append(f"{field}_not_string")
        elif not value.strip():
            problems.append(f"empty_{field}")
    context = record.get("context", "")
    if context is None:
        context = ""
    if not isinstance(context, str):
        problems.append("context_not_string")
    identity, document_problems = _identity(record.get("document"))
    problems += document_problems
    if problems:
        return None, problems
    passage = JudgePassage(key="P1", text=record["passage"], identity=identity)
    return JudgeItem(item_id=item_id, claim=record["claim"], passages=(passage,), context=context), []


def _row(record_id: JSONValue, result: JudgeResult) -> JSONObject:
    reasons = list(result.reasons)
    if result.verdict == "unverified" and result.unverified_reason:
        reasons = [result.unverified_reason, *reasons]
    return {"id": record_id, "verdict": result.verdict, "reasons": reasons}


async def judge_records(
    records: Iterable[object], judge: Judge, *, batch_size: int = 64, stats: RecheckStats | None = None
) -> list[JSONObject]:
    """One ``{"id", "verdict", "reasons"}`` per record, same order: judged, then re-checked when unsupported.

    Records are judged ``batch_size`` at a time through :func:`judge.batching.judge_batch` (no deadline, no
    budget); ``stats`` (optional) receives the judge calls used.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    records = list(records)
    rows: list[JSONObject | None] = [None] * len(records)
    ids: list[JSONValue] = []
    valid: list[tuple[int, JudgeItem]] = []
    for index, record in enumerate(records):
        record_id = record.get("id") if isinstance(record, dict) else None
        ids.append(record_id)
        item, problems = _to_item(record, f"line-{index}")
        if item is None:
            rows[index] = {"id": record_id, "verdict": "unverified", "reasons": ["invalid_input", *problems]}
        else:
            valid.append((index, item))
    judge_fn = partial(judge_batch, judge)
    for start in range(0, len(valid), batch_size):
        chunk = valid[start : start + batch_size]
        results = await judge_with_recheck(
            judge_fn, [item for _, item in chunk], stats=stats, deterministic=judge.deterministic
        )
        for (index, _), result in zip(chunk, results, strict=True):
            rows[index] = _row(ids[index], result)
    return [row for row in rows if row is not None]
