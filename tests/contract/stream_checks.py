"""Checkers of the annotate-v2 SSE streams (seed 000, CONTRACT.md): frame order, one terminal frame, tool
frames first and paired, every frame valid against its published schema, and the frames equal to the JSON
body of the same answer. ``assert_v2_stream(parse_sse(text))``."""

from __future__ import annotations

from typing import Any

from tests.contract.checks import (
    FAITHFULNESS_KEYS,
    OFFSET_KEYS,
    check_claim,
    check_coverage,
    check_faithfulness,
    check_refusal,
    strip_volatile,
    validate_against_schema,
)


def _terminal(frames: list[tuple[str, dict[str, Any]]]) -> str:
    assert frames, "empty stream"
    terminals = [i for i, (event, _) in enumerate(frames) if event in ("done", "error")]
    assert terminals == [len(frames) - 1], f"exactly one terminal done/error, last; got at {terminals}"
    return frames[-1][0]


def _tool_prefix(frames: list[tuple[str, dict[str, Any]]]) -> int:
    """Index of the first non-tool frame; tool.started/finished pair up by call_id."""
    position, open_calls = 0, set()
    while position < len(frames) and frames[position][0].startswith("tool."):
        event, data = frames[position]
        assert event in ("tool.started", "tool.finished"), f"unknown tool event {event}"
        if event == "tool.started":
            open_calls.add(data["call_id"])
        else:
            assert data["call_id"] in open_calls, "tool.finished without tool.started"
            open_calls.discard(data["call_id"])
        position += 1
    assert not any(e.startswith("tool.") for e, _ in frames[position:]), "tool frames after message.start"
    return position


def assert_v2_stream(
    frames: list[tuple[str, dict[str, Any]]], *, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The /query/v2/stream order and payloads (see CONTRACT.md "Streaming order (v2)"). Returns
    ``{"answer", "annotations", "message_start", "citations", "passages", "tools", "terminal"}``. With
    ``body`` (the JSON answer of an identical request) the stream must carry the same answer and marks."""
    for event, data in frames:
        validate_against_schema(data, f"event.{event}")
    terminal = _terminal(frames)
    position = _tool_prefix(frames)
    tools = frames[:position]
    rest = frames[position:]
    out: dict[str, Any] = {
        "tools": tools,
        "terminal": frames[-1],
        "answer": None,
        "annotations": None,
        "message_start": None,
        "citations": [],
        "passages": [],
    }
    if rest[0][0] == "error":  # failed after tool frames, before anything of the answer
        assert len(rest) == 1
        return out
    events = [e for e, _ in rest]
    assert events[0] == "message.start", f"expected message.start after tools, got {events[:3]}"
    assert rest[0][1]["schema"] == "annotate-v2", "message.start must carry schema annotate-v2"
    assert events[1] == "trace", "trace follows message.start"
    out["message_start"] = rest[0][1]
    i = 2
    while events[i] == "citation":
        assert rest[i][1].get("citation_key"), "citation frame without citation_key"
        out["citations"].append(rest[i][1])
        i += 1
    blocked = events[i] == "guard.blocked"
    if blocked:
        i += 1
    while events[i] == "passage":
        assert rest[i][1].get("citation_key"), "passage frame without citation_key"
        out["passages"].append(rest[i][1])
        i += 1
    assert not (blocked and out["passages"]), "guard.blocked and passage frames together"
    assert events[i] == "annotations", f"expected annotations, got {events[i]!r}"
    annotations = rest[i][1]
    out["annotations"] = annotations
    i += 1
    deltas = []
    while events[i] == "answer.delta":
        deltas.append(rest[i][1]["text"])
        i += 1
    assert i == len(rest) - 1, f"unexpected frame {events[i]!r} before the end"
    assert "faithfulness" not in events, "the v1 faithfulness frame on a v2 stream"
    if terminal == "done":
        assert deltas, "no answer.delta before done"
    answer = "".join(deltas)
    out["answer"] = answer

    claims, framing = annotations["claims"], annotations["framing"]
    reason = annotations["fallback_reason"]
    assert annotations["fallback_used"] is (reason is not None)
    assert blocked == (reason == "policy_blocked"), "guard.blocked iff policy_blocked"
    for n, claim in enumerate(claims):
        check_claim(claim, f"annotations claim {n}", with_text=False)
    for n, span in enumerate(framing):
        assert set(span) == {"layout", *OFFSET_KEYS}, f"annotations framing {n} keys {sorted(span)}"
    faith = {k: v for k, v in annotations.items() if k in FAITHFULNESS_KEYS or k == "checked"}
    check_faithfulness(faith, claims, framing, fallback_reason=reason)
    if terminal == "done":
        check_coverage(answer, [*claims, *framing], annotations["unlocated_total"], with_text=False)
        if reason is not None:
            check_refusal(answer, claims, framing, faith, reason)
    for key in ("claims_supported", "claims_total", "grounding_rate"):
        if key in annotations:
            assert annotations[key] == annotations["grounding"][key], f"annotations.{key} != grounding.{key}"
    shown = {c["citation_key"] for c in out["citations"]}
    for claim in claims:
        valid = [k for k in claim["citation_keys"] if k not in claim["invalid_citation_keys"]]
        assert set(valid) <= shown, f"claim keys {valid} not paired with citation frames {sorted(shown)}"
        assert not set(claim["invalid_citation_keys"]) & shown, "an invalid key pairs with a citation frame"

    if body is not None:
        assert answer == body["answer"], "concatenated answer.delta differs from the JSON answer"
        strip = ("text", "citations")
        assert claims == [{k: v for k, v in c.items() if k not in strip} for c in body["claims"]]
        assert framing == [{k: v for k, v in f.items() if k != "text"} for f in body["framing"]]
        for key, value in body["faithfulness"].items():
            assert annotations.get(key) == value, f"annotations.{key} differs from faithfulness.{key}"
        assert annotations["fallback_reason"] == body["fallback_reason"]
        assert strip_volatile(out["citations"]) == strip_volatile(body["citations"]), "citation frames differ"
    return out


