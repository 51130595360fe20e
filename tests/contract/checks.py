"""Reusable checkers of the annotate-v2 contract (seed 000, CONTRACT.md) over JSON bodies (SSE streams:
:mod:`tests.contract.stream_checks`).

They take plain dicts, so the same checks run over the in-process Starlette app and over the real Ray
Serve graph (``httpx`` responses): ``assert_v2_body(resp.json())``, ``assert_v2_stream(parse_sse(text))``.
Every check raises ``AssertionError`` with the broken rule in its message.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "serve_app" / "wire" / "json_schemas" / "v1"

VERDICTS = ("supported", "unsupported", "unverified", "uncited", "invalid_citation", "from_conversation")
JUDGED = frozenset({"supported", "unsupported", "unverified"})
UNVERIFIED_REASONS = ("deadline", "budget", "judge_unavailable", "unparseable", "disputed")
KINDS = frozenset({"fact", "framing"})
LAYOUTS = frozenset({"paragraph", "heading", "list_item", "continue", "table_header", "table_row"})
STATUS3 = frozenset({"complete", "unavailable", "skipped"})
VERIFICATIONS = frozenset({"full", "partial", "none"})
FALLBACK_REASONS = frozenset(
    {
        "policy_blocked",
        "query_budget_exhausted",
        "model_timeout",
        "context_budget_exhausted",
        "agent_output_limit",
        "mcp_source_unavailable",
        "source_out_of_scope",
        "source_scope_unavailable",
        "unparseable_completion",
        "source_scope_empty",
    }
)
V1_ONLY = ("claim_map", "dropped_claims_count", "dropped_claim_reasons", "provenance_complete")
OPT_IN = ("grounding", "used_docs", "tool_call_audit", "model_call_log")
ANSWER_V1_FIELDS = ("model", "prompt_template_version", "usage", "retrieval", "created_at")
KEPT_V1_FIELDS = (
    "answer",
    "trace_id",
    "history_truncated",
    "history_exchanges_in_view",
    "citations",
    "tool",
    "tool_executed",
    "fallback_used",
    "fallback_reason",
    "claims_supported",
    "claims_total",
    "grounding_rate",
)
FAITHFULNESS_KEYS = frozenset(
    {
        "mechanism",
        "judge_status",
        "framing_check",
        "claims_total",
        *VERDICTS,
        "unverified_reasons",
        "framing_total",
        "unlocated_total",
        "verification",
        "grounding",
    }
)
OFFSET_KEYS = ("start", "end", "start_utf16", "end_utf16")
# What the server writes between segments: whitespace, "## ", "- ", table pipes and the separator row.
_LAYOUT_GAP = re.compile(r"(?:\s|## |- |\|(?: -{3,} \|)+|\|)*")
_CITATION_LABEL = re.compile(r"\[\s*P\d+\s*\]")
# Internals that must never reach a client: tracebacks and exception class names.
LEAK = re.compile(r"Traceback|File \"|\b[A-Z][A-Za-z]*(?:Error|Exception)\b|pydantic|sqlalchemy|asyncio")


# ---------------------------------------------------------------------------- small helpers


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def utf16_slice(text: str, start: int, end: int) -> str:
    return text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")


def walk_keys(value: Any) -> Iterable[str]:
    """Every dict key anywhere inside ``value``."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from walk_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from walk_keys(inner)


def assert_no_internals(text: str) -> None:
    """No traceback, exception class name or library name in a response text."""
    found = LEAK.search(text)
    assert found is None, f"response leaks internals: {found.group(0)!r} in {text[:300]!r}"


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    path = SCHEMA_DIR / f"{name}.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validate_against_schema(body: Any, name: str) -> None:
    """Validate ``body`` against the committed JSON Schema
    ``serve_app/wire/json_schemas/v1/<name>.schema.json``
    (Draft 2020-12), e.g. ``query_v2_response`` or ``event.annotations``."""
    errors = sorted(_validator(name).iter_errors(body), key=lambda e: list(e.absolute_path))
    assert not errors, f"{name}: " + "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """``event:``/``data:`` blocks separated by blank lines → ``[(event, data), ...]``. Every block must have
    exactly one event name and JSON object data."""
    frames: list[tuple[str, dict[str, Any]]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event: str | None = None
        data_lines: list[str] = []
        for line in block.split("\n"):
            if line.startswith(":"):
                continue  # an SSE comment (keep-alive)
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                assert event is None, f"two event lines in one frame: {block!r}"
                event = value
            elif name == "data":
                data_lines.append(value)
            else:
                raise AssertionError(f"unexpected SSE line {line!r}")
        if event is None and not data_lines:
            continue  # a block of comments only
        assert event, f"frame without an event name: {block!r}"
        assert data_lines, f"frame {event!r} without data"
        data = json.loads("\n".join(data_lines))
        assert isinstance(data, dict), f"frame {event!r} data is not an object"
        frames.append((event, data))
    return frames


# ---------------------------------------------------------------------------- spans and marks


def _check_offsets(answer: str, span: dict[str, Any], where: str, *, with_text: bool) -> None:
    for key in OFFSET_KEYS:
        assert isinstance(span.get(key), int) and not isinstance(span[key], bool), f"{where}: {key} not int"
    start, end, s16, e16 = (span[k] for k in OFFSET_KEYS)
    assert 0 <= start < end <= len(answer), f"{where}: bad code point range {start}..{end} of {len(answer)}"
    assert utf16_len(answer[:start]) == s16, f"{where}: start_utf16 {s16} != UTF-16 index of start {start}"
    assert utf16_len(answer[:end]) == e16, f"{where}: end_utf16 {e16} != UTF-16 index of end {end}"
    if with_text:
        text = span["text"]
        assert answer[start:end] == text, f"{where}: answer[start:end] {answer[start:end]!r} != text {text!r}"
        assert utf16_slice(answer, s16, e16) == text, f"{where}: UTF-16 slice differs from text"


def check_coverage(
    answer: str, spans: Sequence[dict[str, Any]], unlocated_total: int, *, with_text: bool
) -> None:
    """Spans ordered, non-overlapping, exact; every uncovered run is server layout except exactly
    ``unlocated_total`` runs."""
    ordered = sorted(spans, key=lambda s: s["start"])
    for position, span in enumerate(ordered):
        _check_offsets(answer, span, f"span {position} ({span.get('layout')})", with_text=with_text)
    for before, after in zip(ordered, ordered[1:], strict=False):
        assert before["end"] <= after["start"], (
            f"spans overlap: {before['start']}..{before['end']} and {after['start']}..{after['end']}"
        )
    pieces, position = [], 0
    for span in [*ordered, {"start": len(answer), "end": len(answer)}]:
        gap = answer[position : span["start"]]
        if gap and not _LAYOUT_GAP.fullmatch(gap):
            pieces.append(gap)
        position = span["end"]
    assert len(pieces) == unlocated_total, (
        f"unlocated_total {unlocated_total} but {len(pieces)} uncovered non-layout runs: {pieces[:3]!r}"
    )


def check_claim(claim: dict[str, Any], where: str, *, with_text: bool) -> None:
    verdict = claim["verdict"]
    assert verdict in VERDICTS, f"{where}: unknown verdict {verdict!r}"
    assert claim["kind"] in KINDS, f"{where}: unknown kind {claim['kind']!r}"
    assert claim["layout"] in LAYOUTS, f"{where}: unknown layout {claim['layout']!r}"
    reason = claim["unverified_reason"]
    if verdict == "unverified":
        assert reason in UNVERIFIED_REASONS, f"{where}: unverified with reason {reason!r}"
    else:
        assert reason is None, f"{where}: verdict {verdict} carries unverified_reason {reason!r}"
    keys, invalid = claim["citation_keys"], claim["invalid_citation_keys"]
    assert all(isinstance(k, str) and k for k in keys), f"{where}: bad citation_keys {keys!r}"
    assert set(invalid) <= set(keys), f"{where}: invalid_citation_keys {invalid} not among {keys}"
    valid = [k for k in keys if k not in invalid]
    if verdict == "uncited":
        assert not keys, f"{where}: uncited claim cites {keys}"
    if not keys:
        assert verdict in ("uncited", "from_conversation"), f"{where}: cites nothing but is {verdict}"
    if verdict == "invalid_citation":
        assert keys and not valid, f"{where}: invalid_citation with valid keys {valid}"
    if keys and not valid:
        assert verdict in ("invalid_citation", "from_conversation"), (
            f"{where}: all keys invalid but {verdict}"
        )
    if verdict in JUDGED:
        assert valid, f"{where}: judged ({verdict}) without a valid citation"
    if with_text:
        assert isinstance(claim["text"], str) and claim["text"], f"{where}: empty text"
        paired = [pair["citation_key"] for pair in claim["citations"]]
        assert paired == valid, f"{where}: citations pair {paired}, valid keys are {valid}"
        for pair in claim["citations"]:
            assert isinstance(pair["citation"], dict) and pair["citation"], f"{where}: empty citation"
    else:
        assert "text" not in claim and "citations" not in claim, f"{where}: annotations carry text"


def check_faithfulness(
    faith: dict[str, Any],
    claims: Sequence[dict[str, Any]],
    framing: Sequence[dict[str, Any]],
    *,
    fallback_reason: str | None,
) -> None:
    expected_keys = set(FAITHFULNESS_KEYS)
    if fallback_reason == "context_budget_exhausted":
        expected_keys.add("checked")
        assert faith.get("checked") is False, "context_budget_exhausted needs faithfulness.checked == false"
    else:
        assert "checked" not in faith, f"'checked' present (={faith.get('checked')!r}) outside context budget"
    assert set(faith) >= expected_keys, f"faithfulness misses {sorted(expected_keys - set(faith))}"
    assert faith["mechanism"] == "annotate-v2"
    assert faith["judge_status"] in STATUS3 and faith["framing_check"] in STATUS3
    assert faith["verification"] in VERIFICATIONS
    assert set(faith["unverified_reasons"]) == set(UNVERIFIED_REASONS), "unverified_reasons keys"
    for key in (*VERDICTS, "claims_total", "framing_total", "unlocated_total"):
        assert isinstance(faith[key], int) and faith[key] >= 0, f"faithfulness.{key} = {faith[key]!r}"

    blocked = fallback_reason == "policy_blocked"
    counts = Counter(c["verdict"] for c in claims)
    if not blocked:  # a Policy Guard block withholds the claims but keeps the counts checked before it
        for verdict in VERDICTS:
            assert faith[verdict] == counts[verdict], (
                f"faithfulness.{verdict} {faith[verdict]} != {counts[verdict]}"
            )
        reasons = Counter(c["unverified_reason"] for c in claims if c["verdict"] == "unverified")
        assert faith["unverified_reasons"] == {r: reasons[r] for r in UNVERIFIED_REASONS}, (
            "unverified_reasons"
        )
        assert faith["framing_total"] == len(framing), "framing_total != number of framing spans"
    assert sum(faith["unverified_reasons"].values()) == faith["unverified"], (
        "reasons do not sum to unverified"
    )
    total = sum(faith[v] for v in VERDICTS if v != "from_conversation")
    assert faith["claims_total"] == total, (
        f"claims_total {faith['claims_total']} must exclude from_conversation"
    )
    rate = faith["supported"] / total if total else None
    grounding = faith["grounding"]
    assert set(grounding) == {"claims_supported", "claims_total", "grounding_rate"}
    assert grounding["claims_supported"] == faith["supported"] and grounding["claims_total"] == total
    if rate is None:
        assert grounding["grounding_rate"] is None, "grounding_rate must be null when claims_total is 0"
    else:
        assert grounding["grounding_rate"] is not None and abs(grounding["grounding_rate"] - rate) < 1e-6

    supported = counts["supported"]  # what is published decides the banner
    if supported == 0:
        expected = "none"
    elif supported == len(claims) and faith["unlocated_total"] == 0:
        expected = "full"
    else:
        expected = "partial"
    assert faith["verification"] == expected, (
        f"verification {faith['verification']} but rule gives {expected}"
    )

    if not blocked:
        judged = [c for c in claims if c["verdict"] in JUDGED]
        judge_status = (
            "skipped"
            if not judged
            else ("unavailable" if any(c["verdict"] == "unverified" for c in judged) else "complete")
        )
        assert faith["judge_status"] == judge_status, (
            f"judge_status {faith['judge_status']} != {judge_status}"
        )
        unchecked_framing = [c for c in claims if c["kind"] == "framing" and not c["citation_keys"]]
        if framing:
            assert faith["framing_check"] == "complete", "framing spans exist only after a complete check"
        if faith["framing_check"] == "unavailable":
            assert not framing, "framing check unavailable but framing spans were let through"
            assert unchecked_framing and all(c["verdict"] == "uncited" for c in unchecked_framing), (
                "framing check unavailable: every framing segment must be an uncited claim"
            )
        if faith["framing_check"] == "skipped":
            assert not framing and not unchecked_framing, "framing check skipped but framing was present"


def check_refusal(
    answer: str,
    claims: list[dict[str, Any]],
    framing: list[dict[str, Any]],
    faith: dict[str, Any],
    reason: str | None,
) -> None:
    assert reason in FALLBACK_REASONS, f"unknown fallback_reason {reason!r}"
    assert claims == [] and framing == [], f"refusal {reason} carries claims or framing"
    assert answer.strip(), "refusal without text"
    assert faith["unlocated_total"] == 1, f"a refusal is one uncovered piece, not {faith['unlocated_total']}"
    assert faith["verification"] == "none"


# ---------------------------------------------------------------------------- bodies


def assert_v2_body(body: dict[str, Any], *, opt_in: Iterable[str] = (), playground: bool = False) -> None:
    """Every invariant of an annotate-v2 JSON body (``/query/v2``; ``playground=True`` for ``/playground``).
    ``opt_in`` names the opt-in fields the request asked for (``include_grounding`` → grounding;
    ``include_provenance`` → used_docs, tool_call_audit, model_call_log)."""
    asked = set(opt_in)
    assert body.get("schema") == "annotate-v2", f"schema is {body.get('schema')!r}"
    for key in (*KEPT_V1_FIELDS, *ANSWER_V1_FIELDS, "claims", "framing", "faithfulness"):
        assert key in body, f"missing field {key!r}"
    for key in V1_ONLY:
        assert key not in body, f"v1-only field {key!r} in a v2 body"
    for key in OPT_IN:
        if key in asked:
            assert isinstance(body.get(key), list), f"opt-in {key!r} asked for but missing"
        else:
            assert key not in body, f"opt-in field {key!r} present without being asked for"
    assert "grounded" not in set(walk_keys(body)), "a key named 'grounded' is in the body"
    if playground:
        assert body.get("published") is False
        assert isinstance(body.get("playground_run_id"), str) and body["playground_run_id"]
        assert isinstance(body.get("latency_ms"), int | float) and body["latency_ms"] >= 0
        assert "conversation_id" not in body and "message_id" not in body, "playground publishes no ids"
        # the embedded writer takes no prompt: the body says so rather than ignoring it silently
        embedded_writer = body["model"]["agent"]["engine"] == "embedded"
        assert body.get("editorial_prompt_applied") is (not embedded_writer), "editorial_prompt_applied"
    else:
        for key in ("conversation_id", "message_id"):
            assert isinstance(body.get(key), str) and body[key], f"{key} missing"
        assert "playground_run_id" not in body and "published" not in body
    assert isinstance(body["model"], dict) and body["model"], "model"
    assert isinstance(body["prompt_template_version"], str) and body["prompt_template_version"]
    assert set(body["usage"]) >= {"model_calls", "prompt_tokens", "completion_tokens"}, "usage"
    assert isinstance(body["retrieval"], dict), "retrieval"
    datetime.fromisoformat(body["created_at"].replace("Z", "+00:00"))

    answer, claims, framing, faith = body["answer"], body["claims"], body["framing"], body["faithfulness"]
    assert isinstance(answer, str)
    assert not _CITATION_LABEL.search(answer), "answer carries a [P1] label"
    reason = body["fallback_reason"]
    assert body["fallback_used"] is (reason is not None), (
        "fallback_used must say whether a refusal was published"
    )
    for i, claim in enumerate(claims):
        check_claim(claim, f"claim {i}", with_text=True)
    for i, span in enumerate(framing):
        assert set(span) == {"text", "layout", *OFFSET_KEYS}, f"framing {i} keys {sorted(span)}"
        assert span["layout"] in LAYOUTS
    for name, spans in (("claims", claims), ("framing", framing)):
        starts = [s["start"] for s in spans]
        assert starts == sorted(starts), f"{name} not in answer order"
    check_coverage(answer, [*claims, *framing], faith["unlocated_total"], with_text=True)
    check_faithfulness(faith, claims, framing, fallback_reason=reason)
    if reason is not None:
        check_refusal(answer, claims, framing, faith, reason)
    grounding = faith["grounding"]
    assert body["claims_supported"] == grounding["claims_supported"], "top-level claims_supported"
    assert body["claims_total"] == grounding["claims_total"], "top-level claims_total"
    assert body["grounding_rate"] == grounding["grounding_rate"], "top-level grounding_rate"

    published = {c.get("citation_key"): c for c in body["citations"]}
    assert all(isinstance(k, str) and k for k in published), "every citation carries its citation_key"
    invalid = {k for c in claims for k in c["invalid_citation_keys"]}
    assert not invalid & set(published), f"invalid keys {invalid & set(published)} paired with a citation"
    for claim in claims:
        for pair in claim["citations"]:
            assert pair["citation_key"] in published, (
                f"claim cites {pair['citation_key']} missing in citations"
            )
            chunk = published[pair["citation_key"]].get("chunk_id")
            assert pair["citation"].get("chunk_id") == chunk, "claim citation and published citation differ"


def assert_v1_body(body: dict[str, Any]) -> None:
    """The /query (v1) shape: claim_map offsets exact, v2-only fields absent, refusals without claims."""
    for key in (*KEPT_V1_FIELDS, *ANSWER_V1_FIELDS, *V1_ONLY, "conversation_id", "message_id"):
        assert key in body, f"missing v1 field {key!r}"
    for key in ("schema", "claims", "framing", "faithfulness"):
        assert key not in body, f"v2-only field {key!r} in a v1 body"
    assert "grounded" not in set(walk_keys(body))
    answer = body["answer"]
    entries = body["claim_map"]
    for i, entry in enumerate(entries):
        _check_offsets(answer, entry, f"claim_map {i}", with_text=True)
        assert [p["citation_key"] for p in entry["citations"]] == entry["citation_keys"]
    for before, after in zip(entries, entries[1:], strict=False):
        assert before["end"] <= after["start"], "claim_map entries overlap or are out of order"
    assert body["fallback_used"] is (body["fallback_reason"] is not None)
    if body["fallback_used"]:
        assert entries == [], "a v1 refusal carries a claim map"
    assert sum(body["dropped_claim_reasons"].values()) == body["dropped_claims_count"]
    total = body["claims_total"]
    rate = body["claims_supported"] / total if total else None
    assert (body["grounding_rate"] is None) if rate is None else abs(body["grounding_rate"] - rate) < 1e-6


VOLATILE = frozenset(
    {
        "trace_id",
        "conversation_id",
        "message_id",
        "created_at",
        "latency_ms",
        "duration_ms",
        "started_at",
        "finished_at",
        "call_id",
        "playground_run_id",
    }
)


def strip_volatile(value: Any) -> Any:
    """``value`` without ids, times and latencies (to compare two answers to identical requests)."""
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list | tuple):
        return [strip_volatile(v) for v in value]
    return value
